import Foundation
import SettingsStore
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("What users hit: history lines, list keys, secrets in messages, the daemon binary's version")
    struct PolishTests {
        @Test("history shows its zone, cuts long values short and reads PREFIX.* as a prefix")
        func historyLines() throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "acct.name", "me").status == 0)
            #expect(daemon.cli("set", "acct.bio", String(repeating: "x", count: 20_000)).status == 0)
            let lines = daemon.cli("history", "acct.*").output.split(separator: "\n")
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.allSatisfy { $0.dropFirst(19).hasPrefix("Z  acct.") }, "\(lines)")
            #expect(lines.allSatisfy { $0.utf8.count < 400 }, "\(lines.map(\.utf8.count))")
            #expect(lines.first?.contains("… (20002 bytes)") == true, "\(lines.first ?? "")")
            // --json still has the whole value.
            #expect(daemon.cli("history", "acct.bio", "--json").output.utf8.count > 20_000)
        }

        @Test("list quotes keys that could be misread")
        func listQuotesAmbiguousKeys() throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "q.a = b", "c").status == 0)
            #expect(daemon.cli("set", "q.plain", "d").status == 0)
            #expect(daemon.cli("list", "q.").output == "\"q.a = b\" = \"c\"\nq.plain = \"d\"\n")
        }

        @Test("describe says a key is secret, and a refused secret is not echoed in the error")
        func secretsAreNotEchoed() throws {
            let directory = TemporaryDirectory()
            let schemas = directory.file("schemas")
            try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
            try
                #"{"format": "settingsd-schema", "version": 1, "keys": {"acct.pin": {"type": "string", "secret": true, "choices": ["0000"], "maxLength": 4}, "acct.code": {"type": "int", "secret": true, "max": 9}}}"#
                .write(toFile: schemas + "/acct.json", atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(directory, arguments: ["--schemas", schemas])
            #expect(daemon.cli("describe", "acct.pin").output.contains("secret: yes"))
            #expect(daemon.cli("describe", "acct.pin", "--json").output.contains("\"secret\":true"))
            let pin = daemon.cli("set", "acct.pin", "4821")
            #expect(
                pin.status != 0 && pin.error.contains("must be one of") && !pin.error.contains("4821"),
                "\(pin.error)")
            let code = daemon.cli("set", "acct.code", "31337", "--type", "int")
            #expect(code.status != 0 && !code.error.contains("31337"), "\(code.error)")
        }

        @Test("settingsd-daemon refuses to run for a settingsd of another version")
        func daemonBinaryChecksItsVersion() throws {
            let daemonBinary = URL(fileURLWithPath: SettingsdBinary.path).deletingLastPathComponent()
                .appendingPathComponent("settingsd-daemon").path
            var environment = ProcessInfo.processInfo.environment
            environment["SETTINGSD_STARTED_BY_VERSION"] = "0.0.1"
            let result = DaemonProcess.run(["--version"], environment: environment, through: daemonBinary)
            #expect(result.status == 1)
            #expect(result.error.contains("settingsd 0.0.1 started settingsd-daemon"), "\(result.error)")
            environment["SETTINGSD_STARTED_BY_VERSION"] = SettingsdVersion.current
            #expect(
                DaemonProcess.run(["--version"], environment: environment, through: daemonBinary).status == 0)
        }
    }
}

extension Reliability.PolishTests {
    @Test(
        "reset --all returns the whole store to its defaults, skipping locked keys; an empty key is refused")
    func resetTheWholeStore() throws {
        let directory = TemporaryDirectory()
        let system = try SystemFolder(
            directory, defaults: ["10.json": #"{"b.locked": "site"}"#], locks: ["l": "b.locked\n"])
        let daemon = try DaemonProcess(directory, arguments: ["--system-dir", system.path])
        for key in ["a.one", "b.two", "c"] { #expect(daemon.cli("set", key, "v").status == 0) }
        #expect(daemon.cli("reset").status == 64)
        #expect(daemon.cli("reset", "a.one", "--all").status == 64)
        let reset = daemon.cli("reset", "--all")
        #expect(reset.status == 0, "\(reset.error)")
        #expect(reset.error.contains("reset 3 key(s) to their defaults"), "\(reset.error)")
        #expect(daemon.cli("list").output.isEmpty)
        #expect(daemon.cli("get", "b.locked").output == "site\n")
    }
}

extension Reliability.PolishTests {
    @Test(
        "watch survives a daemon restart: it waits, prints what changed while the daemon was down, and goes on"
    )
    func watchReconnects() async throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        let (watcher, output) = try daemon.watcher("w.")
        defer { watcher.terminate() }
        let lines = Mutex<String>("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            lines.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        let client = try daemon.client()
        try await waitUntil { try DaemonStatus(fields: client.request(.status)).watches == 1 }
        #expect(daemon.cli("set", "w.a", "1").status == 0)
        try await waitUntil { lines.withLock { $0.contains("local w.a = \"1\"") } }
        _ = daemon.terminate()
        // Written while no daemon runs: the database file itself.
        for value in ["x", "y"] {
            #expect(DaemonProcess.run(["set", "w.b", value, "--db", daemon.database]).status == 0)
        }
        try daemon.start()
        try await waitUntil(timeout: 60) { lines.withLock { $0.contains("local w.b = \"y\"") } }
        #expect(watcher.isRunning)
        #expect(daemon.cli("set", "w.a", "2").status == 0)
        try await waitUntil { lines.withLock { $0.contains("local w.a = \"2\"") } }
        output.fileHandleForReading.readabilityHandler = nil
        let printed = lines.withLock { $0 }
        #expect(
            printed == "local w.a = \"1\"\nlocal w.b = \"x\"\nlocal w.b = \"y\"\nlocal w.a = \"2\"\n",
            "each change once, in order, and no resync")
    }
}
