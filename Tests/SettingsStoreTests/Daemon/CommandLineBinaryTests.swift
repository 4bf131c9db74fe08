import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Two builds of one command line: settingsd static, the daemon in settingsd-daemon")
struct CommandLineBinaryTests {
    let directory = TemporaryDirectory()

    @Test("settingsd starts without the dynamic loader: no shared library is loaded")
    func clientIsStatic() {
        // The loader prints every library it loads under LD_DEBUG=files; a static binary has none.
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "files"
        let client = DaemonProcess.run(["--version"], environment: environment)
        #expect(client.status == 0)
        #expect(client.output.hasPrefix("settingsd "))
        #expect(client.error.isEmpty)
        let daemon = DaemonProcess.run(
            ["--version"], environment: environment, through: CommandLineBinaryTests.daemonBinary)
        #expect(daemon.status == 0)
        #expect(daemon.error.contains("libc.so.6"))
    }

    @Test("settingsd run continues in settingsd-daemon, in the same process, and serves the CLI")
    func runContinuesInTheDaemonBinary() throws {
        let daemon = try DaemonProcess(directory)
        let executable = try FileManager.default.destinationOfSymbolicLink(
            atPath: "/proc/\(daemon.process.processIdentifier)/exe")
        #expect(executable == Self.daemonBinary)
        #expect(daemon.cli("set", "audio.volume", "0.5").status == 0)
        #expect(daemon.cli("get", "audio.volume").output == "0.5\n")
    }

    @Test("settingsd alone still runs client commands, and says why run and hub cannot start")
    func missingDaemonBinary() throws {
        let lone = directory.file("settingsd")
        try SettingsdBinary.copy(to: lone)
        let database = directory.file("lone.sqlite")
        #expect(DaemonProcess.run(["set", "key", "1", "--db", database], through: lone).status == 0)
        #expect(DaemonProcess.run(["get", "key", "--db", database], through: lone).output == "1\n")
        for arguments in [
            ["run", "--db", database, "--socket", directory.file("lone.sock")],
            ["hub", "status", "host=/nonexistent"],
        ] {
            let result = DaemonProcess.run(arguments, through: lone)
            #expect(result.status == 1)
            #expect(
                result.error.contains(
                    "cannot start '\(directory.file("settingsd-daemon"))': No such file or directory"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("lone.sock")))
    }

    /// `settingsd-daemon`, built beside `settingsd`.
    static var daemonBinary: String {
        URL(fileURLWithPath: SettingsdBinary.path).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("settingsd-daemon").path
    }
}
