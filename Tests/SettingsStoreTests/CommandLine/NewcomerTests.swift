import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore
@testable import SettingsWire

extension Reliability {
    @Suite("What a newcomer hits: folders made later, types kept, errors that say what to do")
    struct NewcomerTests {
        @Test("a schema folder created while the daemon runs is read at once, as the README's step does it")
        func schemaFolderCreatedLater() async throws {
            let directory = TemporaryDirectory()
            let schemas = directory.file("share/settingsd/schemas")
            let daemon = try DaemonProcess(directory, arguments: ["--schemas", schemas])
            #expect(daemon.cli("describe", "app.window-size").output.contains("scope: synced"))
            try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
            try
                #"{"format": "settingsd-schema", "version": 1, "keys": {"app.window-size": {"scope": "local"}}}"#
                .write(toFile: schemas + "/mine.json", atomically: false, encoding: .utf8)
            try await waitUntil(timeout: 10) {
                daemon.cli("describe", "app.window-size").output.contains("scope: local")
            }
        }

        @Test(
            "settingsd set without --type keeps the type of the value a key holds, and refuses text that is not one"
        )
        func setKeepsTheStoredType() throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            let client = try daemon.client()
            let kept: [(key: String, stored: SettingValue, text: String, expected: SettingValue)] = [
                ("audio.volume", .double(0.5), "0.3", .double(0.3)),
                ("jobs.count", .integer(3), "4", .integer(4)),
                ("ui.dark", .bool(false), "yes", .bool(true)),
                ("ui.name", .string("0.5"), "0.4", .string("0.4")),
                ("fresh.key", .string("x"), "1", .string("1")),
            ]
            for (key, stored, text, expected) in kept {
                if key != "fresh.key" { try client.request(.set(key: key, value: stored)) }
                let result = daemon.cli("set", key, text)
                #expect(result.status == 0, "\(key): \(result.error)")
                #expect(try client.request(.get(key: key))["value"] == expected.json, "\(key)")
            }
            let refused = daemon.cli("set", "audio.volume", "loud")
            #expect(refused.status == 64)
            #expect(
                refused.error.contains("'audio.volume' holds a double") && refused.error.contains("--type"))
            #expect(try client.request(.get(key: "audio.volume"))["value"] == .double(0.3))
            #expect(daemon.cli("set", "audio.volume", "loud", "--type", "string").status == 0)
        }

        @Test("a typed read that finds another type is reported once per key by default, not swallowed")
        func typedReadFailuresAreReported() throws {
            #expect(SettingsConfiguration().onError != nil)
            let report = ErrorReport(logger: SettingsLogger(minimumLevel: .error))
            let mismatch = SettingsError(.typeMismatch, "type mismatch for 'a'", key: "a")
            #expect(report.report(mismatch))
            #expect(!report.report(mismatch))
            #expect(report.report(SettingsError(.typeMismatch, "type mismatch for 'b'", key: "b")))
            let reported = Mutex<[String]>([])
            var configuration = SettingsConfiguration()
            configuration.onError = { error in reported.withLock { $0.append(error.key ?? "") } }
            let settings = Settings(inMemoryWith: configuration)
            try settings.set("loud", forKey: "audio.volume")
            #expect(settings[SettingKey("audio.volume", default: 0.5)] == 0.5)
            #expect(reported.withLock { $0 } == ["audio.volume"])
        }
    }
}

extension Reliability.NewcomerTests {
    @Test(
        "under systemd the daemon says READY=1 on $NOTIFY_SOCKET once its socket accepts, then RELOADING and STOPPING"
    )
    func notifiesSystemd() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("notify.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { target in
            for (index, byte) in path.utf8.enumerated() { target[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func next() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        }
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = path
        let daemon = try DaemonProcess(directory, environment: environment)
        let ready = next()
        #expect(ready.hasPrefix("READY=1\n") && ready.contains("MAINPID=\(daemon.process.processIdentifier)"))
        #expect(try daemon.client().request(.status)["replica"] != nil, "serving once ready")
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(next() == "RELOADING=1")
        #expect(next() == "READY=1")
        _ = daemon.terminate()
        #expect(next() == "STOPPING=1")
    }
}

extension Reliability.NewcomerTests {
    @Test("a lock with no default to pin freezes the value a key holds instead of hiding it")
    func lockWithoutDefaultFreezes() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set("mine", forKey: "app.mode")
        var policy = SettingsPolicy()
        policy.locks = [SettingsPolicy.Lock(key: "app.", file: "/etc/settingsd/locks.d/app")]
        settings.apply(policy)
        #expect(settings.value(forKey: "app.mode") == "mine")
        #expect(throws: SettingsError.self) { try settings.set("other", forKey: "app.mode") }
        #expect(settings.value(forKey: "app.other") == nil)
    }

    @Test(
        "$SETTINGSD_SYSTEM_DIR stands for /etc/settingsd on every path: the command line on a file, as the daemon"
    )
    func systemDirectoryFromTheEnvironment() throws {
        let directory = TemporaryDirectory()
        let system = directory.file("try-etc")
        try FileManager.default.createDirectory(
            atPath: system + "/defaults.d", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: system + "/locks.d", withIntermediateDirectories: true)
        try #"{"ui.theme": "dark"}"#.write(
            toFile: system + "/defaults.d/10-site.json", atomically: true, encoding: .utf8)
        try "audio.muted\n".write(toFile: system + "/locks.d/audio", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["SETTINGSD_SYSTEM_DIR"] = system
        environment["XDG_DATA_HOME"] = directory.file("data")
        environment["GSETTINGS_SCHEMA_DIR"] = nil
        let database = directory.file("file.sqlite")
        #expect(DaemonProcess.run(["set", "x", "1", "--db", database], environment: environment).status == 0)
        let explained = DaemonProcess.run(
            ["get", "ui.theme", "--explain", "--db", database], environment: environment)
        #expect(
            explained.output.contains("dark") && explained.output.contains(system),
            "\(explained.output)\(explained.error)")
        let locked = DaemonProcess.run(
            ["set", "audio.muted", "true", "--db", database], environment: environment)
        #expect(locked.status == 1 && locked.error.contains("locked"), "\(locked.error)")
        environment["SETTINGSD_SYSTEM_DIR"] = nil
        let free = DaemonProcess.run(
            ["set", "audio.muted", "true", "--db", database], environment: environment)
        #expect(free.status == 0, "\(free.error)")
    }

    @Test("list --schema shows the administrator's rules and hides the built-in ones unless asked")
    func listSchemaHidesBuiltInRules() throws {
        let directory = TemporaryDirectory()
        let schemas = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        try
            #"{"format": "settingsd-schema", "version": 1, "keys": {"site.motd": {"type": "string", "default": "hi"}}}"#
            .write(toFile: schemas + "/site.json", atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(directory, arguments: ["--schemas", schemas])
        let plain = daemon.cli("list", "--schema")
        #expect(
            plain.output == "site.motd (string) = \"hi\"  [schema default from \(schemas)/site.json]\n",
            "\(plain.output)")
        #expect(plain.error.contains("built-in rule(s) not shown (--built-in shows them)"))
        let all = daemon.cli("list", "--schema", "--built-in")
        #expect(all.output.contains("(built in)") && all.output.contains("site.motd"))
        #expect(daemon.cli("list", "--built-in").status == 64)
    }
}
