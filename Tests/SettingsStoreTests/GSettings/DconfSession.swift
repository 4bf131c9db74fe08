import Foundation

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// A private D-Bus session bus with its own `dconf-service`, HOME and XDG folders in a temporary
/// folder: `gsettings` and `dconf` run against it, never against the machine's user database.
final class DconfSession {
    let directory: TemporaryDirectory
    let environment: [String: String]
    private let bus: Process
    private var service: Process

    /// Whether GNOME's desktop schemas are installed (`gsettings-desktop-schemas`).
    static var hasDesktopSchemas: Bool {
        FileManager.default.fileExists(
            atPath: "/usr/share/glib-2.0/schemas/org.gnome.desktop.interface.gschema.xml")
    }

    static var isAvailable: Bool {
        ["/usr/bin/dbus-daemon", "/usr/libexec/dconf-service", "/usr/bin/dconf", "/usr/bin/gsettings"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A session in `directory`; `profile` is the text of a dconf profile (`DCONF_PROFILE`).
    init(_ directory: TemporaryDirectory, profile: String? = nil) async throws {
        self.directory = directory
        let address = "unix:path=\(directory.file("bus"))"
        for folder in ["home", "config", "runtime"] {
            try FileManager.default.createDirectory(
                atPath: directory.file(folder), withIntermediateDirectories: true)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment["HOME"] = directory.file("home")
        environment["XDG_CONFIG_HOME"] = directory.file("config")
        environment["XDG_RUNTIME_DIR"] = directory.file("runtime")
        environment["GSETTINGS_BACKEND"] = "dconf"
        if let profile {
            try profile.write(toFile: directory.file("profile"), atomically: true, encoding: .utf8)
            environment["DCONF_PROFILE"] = directory.file("profile")
        }
        self.environment = environment
        // A bus that activates nothing: with the session's service files, a `dconf` call made
        // before this session's service owned its name had the bus start a second dconf-service,
        // the bus's child, which outlived the bus and kept the test runner's output pipe open:
        // `swift test` then waited for it after every test had passed.
        try Self.busConfiguration.write(toFile: directory.file("bus.conf"), atomically: true, encoding: .utf8)
        bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = [
            "--config-file=\(directory.file("bus.conf"))", "--nofork", "--nopidfile", "--address=\(address)",
        ]
        bus.environment = environment
        bus.standardOutput = FileHandle.nullDevice
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        let socket = directory.file("bus")
        try await waitUntil { FileManager.default.fileExists(atPath: socket) }
        // Started here rather than by bus activation, so that this test owns its process.
        service = try Self.startService(environment)
        // One that exited before it owned its name is started again. (Once, in a full run on 2
        // busy cores, the session never answered for 30 s; the error now says what it saw.)
        var restarts = 0
        var last = CLIResult(status: 0, output: "", error: "")
        do {
            try await waitUntil {
                if !self.service.isRunning {
                    self.service = try Self.startService(environment)
                    restarts += 1
                }
                last = self.run("/usr/bin/dconf", ["write", "/settingsd-probe", "1"])
                return last.status == 0
            }
        } catch {
            throw SettingsError(
                .timeout,
                "the private dconf session never took a write (dconf-service started again \(restarts) times; dconf: \(last.error))"
            )
        }
        _ = run("/usr/bin/dconf", ["reset", "/settingsd-probe"])
    }

    /// A `dconf-service` for the session whose `environment` is given.
    private static func startService(_ environment: [String: String]) throws -> Process {
        let service = Process()
        service.executableURL = URL(fileURLWithPath: "/usr/libexec/dconf-service")
        service.environment = environment
        service.standardOutput = FileHandle.nullDevice
        service.standardError = FileHandle.nullDevice
        try service.run()
        return service
    }

    /// A session bus's policy with no service directories, so nothing is started by activation.
    private static let busConfiguration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """

    deinit {
        // Killed outright: a child of the test runner inherits a mask that blocks SIGTERM.
        for process in [service, bus] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs a program in the session, with `input` on its standard input.
    func run(_ program: String, _ arguments: [String], input: String? = nil) -> CLIResult {
        DaemonProcess.run(arguments, input: input, environment: environment, through: program)
    }

    func dconf(_ arguments: String..., input: String? = nil) -> CLIResult {
        run("/usr/bin/dconf", arguments, input: input)
    }

    func gsettings(_ arguments: String...) -> CLIResult {
        run("/usr/bin/gsettings", arguments)
    }
}
