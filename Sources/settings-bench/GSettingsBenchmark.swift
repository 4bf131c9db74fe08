import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `settings-bench store --only gsettings`: reading the installed GSettings schemas beside GLib
/// reading its compiled `gschemas.compiled`, and importing a dconf dump beside `dconf load`.
struct GSettingsBenchmark {
    let quick: Bool
    static let schemas = "/usr/share/glib-2.0/schemas"

    func run(into report: inout Report, scratch: Scratch) throws {
        guard FileManager.default.fileExists(atPath: "\(Self.schemas)/gschemas.compiled") else {
            note(
                "gsettings: no schemas in \(Self.schemas) (apt-get install gsettings-desktop-schemas): skipped"
            )
            return
        }
        try loadSchemas(into: &report)
        try importDump(into: &report, scratch: scratch)
    }

    private func loadSchemas(into report: inout Report) throws {
        let rounds = quick ? 5 : 21
        var rules = 0
        let ours = median(
            (0..<rounds).map { _ in
                measureSeconds {
                    rules =
                        (try? SettingsSchema(rules: GSettingsSchemas(directories: [Self.schemas]).rules))?
                        .rules.count ?? 0
                }
            })
        // GLib opening gschemas.compiled and reading every key's type, range and default, timed
        // inside Python so that the interpreter's start is not counted.
        let script = """
            import time, gi
            gi.require_version('Gio', '2.0')
            from gi.repository import Gio
            times = []
            for _ in range(\(rounds)):
                start = time.perf_counter()
                source = Gio.SettingsSchemaSource.new_from_directory('\(Self.schemas)', None, True)
                for schema_id in source.list_schemas(True)[0] + source.list_schemas(True)[1]:
                    schema = source.lookup(schema_id, False)
                    for name in schema.list_keys():
                        key = schema.get_key(name)
                        key.get_value_type(); key.get_range(); key.get_default_value()
                times.append(time.perf_counter() - start)
            print(sorted(times)[len(times) // 2])
            """
        guard
            let peer = Double(
                try output(of: ["/usr/bin/python3", "-c", script]).trimmingCharacters(
                    in: .whitespacesAndNewlines))
        else {
            note("gsettings: PyGObject is missing (apt-get install python3-gi): the peer is skipped")
            report.seconds(
                "load installed GSettings schemas (\(rules) rules)", ours, target: .atMost(0.050, "< 50 ms"))
            return
        }
        report.time(
            "load installed GSettings schemas (\(rules) rules)", ours: ours, peer: peer,
            peerName: "GLib, gschemas.compiled", target: .atMost(0.050, "< 50 ms"))
    }

    private func importDump(into report: inout Report, scratch: Scratch) throws {
        let dconf = ["/usr/bin/dbus-daemon", "/usr/libexec/dconf-service", "/usr/bin/dconf"]
        guard dconf.allSatisfy({ access($0, X_OK) == 0 }) else {
            note("gsettings: dconf import skipped (apt-get install dconf-cli dconf-service dbus)")
            return
        }
        let count = quick ? 2_000 : 10_000
        let file = scratch.file("dump.ini")
        try Self.dump(keys: count).write(toFile: file, atomically: true, encoding: .utf8)
        let session = try PrivateDconf(scratch: scratch)
        let rounds = quick ? 2 : 3
        var ours: [Double] = []
        var peer: [Double] = []
        for round in 0..<rounds {
            // Each round imports into empty stores: a second import of the same values is a no-op.
            let daemon = try BenchDaemon(
                binary: siblingSettingsd(), scratch: scratch, name: "dconf-\(round)",
                arguments: ["--schemas", Self.schemas])
            ours.append(
                measureSeconds {
                    ChildProcess.run([
                        siblingSettingsd(), "import", "--format", "dconf", file, "--socket", daemon.socket,
                    ])
                })
            session.run(["/usr/bin/dconf", "reset", "-f", "/"])
            peer.append(measureSeconds { session.run(["/usr/bin/dconf", "load", "/"], input: file) })
        }
        report.time(
            "import a \(count)-key dconf dump (whole command)", ours: median(ours), peer: median(peer),
            peerName: "dconf load", target: .ratio(atMost: 1))
    }

    /// A dump of `keys` keys in folders of 50, of the types GNOME settings have.
    static func dump(keys: Int) -> String {
        var groups: [String] = []
        for folder in 0..<(keys + 49) / 50 {
            var lines = ["[bench/app\(folder)/settings]"]
            for index in 0..<min(50, keys - folder * 50) {
                let value =
                    switch index % 6 {
                    case 0: "'value \(index) with \"quotes\" and é'"
                    case 1: "\(index * 7)"
                    case 2: "uint32 \(index)"
                    case 3: "['<Super>\(index)', '<Alt>F\(index % 12)']"
                    case 4: "\(Double(index) / 8)"
                    default: "[('xkb', 'us'), ('xkb', 'de')]"
                    }
                lines.append("key-\(index)=\(value)")
            }
            groups.append(lines.joined(separator: "\n") + "\n")
        }
        return groups.joined(separator: "\n")
    }

    private func output(of arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A D-Bus session bus and dconf-service of the benchmark's own, with HOME in the scratch folder.
final class PrivateDconf {
    private let bus = Process()
    private let service = Process()
    /// The session's environment: its bus, HOME and XDG folders.
    let environment: [String: String]

    init(scratch: Scratch) throws {
        let address = "unix:path=\(scratch.file("bus"))"
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment["HOME"] = scratch.path
        environment["XDG_CONFIG_HOME"] = scratch.file("config")
        environment["XDG_RUNTIME_DIR"] = scratch.path
        self.environment = environment
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        bus.environment = environment
        bus.standardOutput = FileHandle.nullDevice
        try bus.run()
        while access(scratch.file("bus"), F_OK) != 0 { usleep(2_000) }
        service.executableURL = URL(fileURLWithPath: "/usr/libexec/dconf-service")
        service.environment = environment
        try service.run()
        while run(["/usr/bin/dconf", "write", "/bench-probe", "1"]) != 0 { usleep(5_000) }
    }

    deinit {
        for process in [service, bus] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs a command in the session (`posix_spawn`, so that the measurement is the command's).
    @discardableResult
    func run(_ arguments: [String], input: String? = nil) -> Int32 {
        let names: [String] = ["DBUS_SESSION_BUS_ADDRESS", "HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"]
        let saved = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
        for (name, _) in saved { setenv(name, environment[name] ?? "", 1) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return ChildProcess.run(arguments, input: input)
    }
}
