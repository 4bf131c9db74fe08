import Foundation
import SettingsDaemonClient
import SettingsStore
import Synchronization

/// `settings-bench flatpak`: Flatpak apps' keyfiles mirrored by `run --flatpak`. A change made in
/// a running GLib app (GSettings' keyfile backend, `scripts/glib-settings-app`) on machine A until
/// the same app on machine B hears it (`changed`), through a synced folder, beside the folder's
/// own latency (a set on A to a watch event on B); and a daemon's start with 100 apps' keyfiles
/// beside its start without `--flatpak`.
struct FlatpakBenchmark {
    let quick: Bool
    let binary: String

    static let app = "org.example.Notes"

    func run() {
        runSuite { scratch in
            var report = Report(title: "flatpak")
            try changeBetweenMachines(into: &report, scratch: scratch)
            try startWithApps(into: &report, scratch: scratch, count: quick ? 20 : 100)
            report.print()
        }
    }

    /// Lays out `apps` in an installation with compiled schemas; returns the installation.
    private func install(_ apps: [String], scratch: Scratch, name: String) throws -> String {
        let installation = scratch.file(name)
        for app in apps {
            let schemas = installation + "/app/\(app)/current/active/files/share/glib-2.0/schemas"
            try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
            let path = "/" + app.replacingOccurrences(of: ".", with: "/") + "/"
            let keys = (0..<20).map { index in
                "<key name=\"option-\(index)\" type=\"i\"><default>\(index)</default><summary>Option \(index)</summary></key>"
            }.joined()
            try "<schemalist><schema id=\"\(app)\" path=\"\(path)\">\(keys)</schema></schemalist>".write(
                toFile: schemas + "/\(app).gschema.xml", atomically: true, encoding: .utf8)
            guard ChildProcess.run(["/usr/bin/glib-compile-schemas", schemas]) == 0 else {
                throw CocoaError(.executableLoad)
            }
        }
        return installation
    }

    /// A home where `apps` have run, each with a keyfile of its 20 keys set.
    private func home(_ name: String, apps: [String], scratch: Scratch, keyfiles: Bool) throws -> String {
        let home = scratch.file(name)
        for app in apps {
            let settings = home + "/.var/app/\(app)/config/glib-2.0/settings"
            try FileManager.default.createDirectory(atPath: settings, withIntermediateDirectories: true)
            guard keyfiles else { continue }
            let group = app.replacingOccurrences(of: ".", with: "/")
            let lines = (0..<20).map { "option-\($0)=\($0 * 7)" }.joined(separator: "\n")
            try "[\(group)]\n\(lines)\n".write(
                toFile: settings + "/keyfile", atomically: true, encoding: .utf8)
        }
        return home
    }

    private func environment(home: String, installation: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["FLATPAK_USER_DIR"] = installation
        environment["FLATPAK_SYSTEM_DIR"] = "/nonexistent"
        return environment
    }

    private func changeBetweenMachines(into report: inout Report, scratch: Scratch) throws {
        let installation = try install([Self.app], scratch: scratch, name: "installation")
        let folder = scratch.file("synced")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var daemons: [BenchDaemon] = []
        var apps: [GLibSettingsApp] = []
        for name in ["a", "b"] {
            let home = try self.home("home-\(name)", apps: [Self.app], scratch: scratch, keyfiles: false)
            daemons.append(
                try BenchDaemon(
                    binary: binary, scratch: scratch, name: name,
                    arguments: ["--flatpak", "--plain-folder", folder, "--name", name],
                    environment: environment(home: home, installation: installation)))
            apps.append(
                try GLibSettingsApp(
                    schema: Self.app, home: home, app: Self.app,
                    schemas: installation + "/app/\(Self.app)/current/active/files/share/glib-2.0/schemas"))
        }
        let key = "flatpak.\(Self.app).org.example.Notes.option-1"
        let watcher = try BlockingClient(socketPath: daemons[1].socket, timeout: 10)
        try watcher.request(.watch(filter: .keys([key])))
        let setter = try BlockingClient(socketPath: daemons[0].socket, timeout: 10)
        let count = quick ? 20 : 100
        var appToApp: [Double] = []
        var folderOnly: [Double] = []
        for round in 0..<count {
            let value = 1_000 + round
            let start = ContinuousClock.now
            apps[0].send("set option-1 \(value)")
            try apps[1].expect("changed option-1 \(value)")
            appToApp.append((ContinuousClock.now - start).seconds)
            _ = try watcher.nextEvent()
            let direct = ContinuousClock.now
            try setter.request(.set(key: key, value: .integer(Int64(50_000 + round))))
            _ = try watcher.nextEvent()
            folderOnly.append((ContinuousClock.now - direct).seconds)
            try apps[1].expect("changed option-1 \(50_000 + round)")
        }
        let transport = folderOnly.sorted()[folderOnly.count / 2]
        report.latency(
            "app on A sets → the app on B hears it (through a synced folder)", sorted: appToApp.sorted(),
            peer: folderOnly.sorted(), peerName: "a set on A → a watch event on B (the folder alone)",
            target: .percentiles(
                p50: transport + 1, p99: folderOnly.sorted()[folderOnly.count * 99 / 100] + 1))
    }

    private func startWithApps(into report: inout Report, scratch: Scratch, count: Int) throws {
        let apps = (0..<count).map { "org.example.App\($0)" }
        let installation = try install(apps, scratch: scratch, name: "installation-\(count)")
        let home = try self.home("home-\(count)", apps: apps, scratch: scratch, keyfiles: true)
        var with: [Double] = []
        var without: [Double] = []
        for round in 0..<(quick ? 2 : 5) {
            for mirrored in [true, false] {
                let start = ContinuousClock.now
                let daemon = try BenchDaemon(
                    binary: binary, scratch: scratch, name: "start-\(round)-\(mirrored)",
                    arguments: mirrored ? ["--flatpak"] : [],
                    environment: environment(home: home, installation: installation))
                let seconds = (ContinuousClock.now - start).seconds
                if mirrored {
                    with.append(seconds)
                    let status = try DaemonStatus(
                        fields: BlockingClient(socketPath: daemon.socket).request(.status))
                    if round == 0 {
                        note(
                            "first start: \(status.flatpak?.keysFromDconf ?? 0) keys taken from \(count) keyfiles"
                        )
                    }
                } else {
                    without.append(seconds)
                }
            }
        }
        report.time(
            "daemon start to serving, \(count) apps' keyfiles (\(count * 20) keys)", ours: median(with),
            peer: median(without), peerName: "the same daemon without --flatpak", target: .reported)
    }
}

/// `scripts/glib-settings-app` in its own process, with the app's sandbox settings folder.
final class GLibSettingsApp {
    private let process = Process()
    private let input = Pipe()
    private let lines = Lines()

    private final class Lines: Sendable {
        let printed = Mutex<[String]>([])
    }

    init(schema: String, home: String, app: String, schemas: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/glib-settings-app").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, schema]
        var environment = ProcessInfo.processInfo.environment
        environment["GSETTINGS_BACKEND"] = "keyfile"
        environment["XDG_CONFIG_HOME"] = home + "/.var/app/\(app)/config"
        environment["GSETTINGS_SCHEMA_DIR"] = schemas
        process.environment = environment
        process.standardInput = input
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = output.fileHandleForReading
        Thread.detachNewThread { [lines] in
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending += data
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...end)
                    lines.printed.withLock { $0.append(line) }
                }
            }
        }
        try expect("ready")
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Sends a command line (`set KEY GVARIANT`).
    func send(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// Waits (polling every 0.2 ms) until the app has printed `line`, then forgets what it printed.
    func expect(_ line: String, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while !lines.printed.withLock({ printed in
            guard printed.contains(line) else { return false }
            printed.removeAll()
            return true
        }) {
            guard ContinuousClock.now < deadline else { throw CocoaError(.fileReadUnknown) }
            usleep(200)
        }
    }
}
