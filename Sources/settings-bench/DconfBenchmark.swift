import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `settings-bench dconf`: the live dconf bridge. `gsettings set` on machine A to dconf's change
/// signal on machine B through a PostgreSQL hub, beside the same signal on one machine; the idle
/// bridge's wake-ups and CPU; the first comparison of a 2,000-key user database at start,
/// beside `dconf dump` reading it.
struct DconfBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        let tools = [
            "/usr/bin/dbus-daemon", "/usr/libexec/dconf-service", "/usr/bin/dconf", "/usr/bin/gsettings",
        ]
        guard tools.allSatisfy({ access($0, X_OK) == 0 }) else {
            note("dconf: needs dbus, dconf-service, dconf-cli and libglib2.0-bin: skipped")
            return
        }
        runSuite { scratch in
            let hub = try HubUnderTest()
            var report = Report(title: "dconf bridge (through \(hub.description))")
            _ = try HubAdministration.initialize(url: hub.adminURL)
            try latencyAndIdle(into: &report, hub: hub, scratch: scratch)
            try initialComparison(into: &report, scratch: scratch)
            report.print()
        }
    }

    private func latencyAndIdle(into report: inout Report, hub: HubUnderTest, scratch: Scratch) throws {
        let url = try hub.newNamespace()
        let sessionA = try PrivateDconf(scratch: scratch.folder("a"))
        let sessionB = try PrivateDconf(scratch: scratch.folder("b"))
        let bridge = ["--dconf", "/org/gnome/", "--schemas", GSettingsBenchmark.schemas]
        let a = try BenchDaemon(
            binary: binary, scratch: scratch, name: "a", arguments: bridge, environment: sessionA.environment,
            hub: url)
        let b = try BenchDaemon(
            binary: binary, scratch: scratch, name: "b", arguments: bridge, environment: sessionB.environment,
            hub: url)
        for daemon in [a, b] {
            ChildProcess.run([binary, "sync", "--wait", "--timeout", "30", "--socket", daemon.socket])
        }
        let watch = try LineWatch(["/usr/bin/dconf", "watch", "/"], environment: sessionB.environment)
        let key = "org.gnome.desktop.interface.gtk-theme"
        let storeA = try LineWatch(
            [binary, "watch", key, "--socket", a.socket], environment: sessionA.environment)
        let storeB = try LineWatch(
            [binary, "watch", key, "--socket", b.socket], environment: sessionB.environment)
        usleep(200_000)
        let count = quick ? 40 : 200
        var stages: [[Double]] = [[], [], []]
        func trips(from session: PrivateDconf, tag: String, stages record: Bool) -> [Double] {
            (0..<count).map { index in
                let value = "\(tag)-\(index)"
                let started = Date()
                session.run([
                    "/usr/bin/gsettings", "set", "org.gnome.desktop.interface", "gtk-theme", value,
                ])
                let arrived = watch.wait(for: "'\(value)'").timeIntervalSince(started)
                if record {
                    let inA = storeA.wait(for: "\"\(value)\"").timeIntervalSince(started)
                    let inB = storeB.wait(for: "\"\(value)\"").timeIntervalSince(started)
                    stages[0].append(inA)
                    stages[1].append(inB - inA)
                    stages[2].append(arrived - inB)
                }
                // As a person changes settings, not back to back: the hub spaces the rounds that
                // notifications cause 50 ms apart, so changes closer than that wait for it.
                usleep(60_000)
                return arrived
            }.sorted()
        }
        note("dconf: \(count) changes on A, to B's dconf watch through the hub")
        let remote = trips(from: sessionA, tag: "remote", stages: true)
        let local = trips(from: sessionB, tag: "local", stages: false)
        report.latency(
            "gsettings set on A → dconf change on B, through the hub, 60 ms apart", sorted: remote,
            target: .percentiles(p50: 0.050, p99: 0.200))
        report.latency("peer: gsettings set → dconf change, one machine", sorted: local, target: .reported)
        for (name, samples) in zip(
            [
                "  of which: gsettings set → A's store", "  A's store → B's store (the hub)",
                "  B's store → B's dconf",
            ],
            stages)
        {
            report.latency(name, sorted: samples.sorted(), target: .reported)
        }

        let seconds = quick ? 5.0 : 60.0
        note("dconf: the idle bridge over \(Int(seconds)) s")
        usleep(1_000_000)
        let pid = b.process.processIdentifier
        let before = ThreadCounters(pid: pid)
        usleep(UInt32(seconds * 1_000_000))
        let after = ThreadCounters(pid: pid)
        let bridgeThreads = ["dconf", "gdbus", "gmain"]
        let wakeups = bridgeThreads.reduce(0) { $0 + after.wakeups(of: $1) - before.wakeups(of: $1) }
        report.quantity(
            "idle bridge: wake-ups of its threads (dconf, gdbus, gmain) in \(Int(seconds)) s",
            Double(wakeups),
            unit: "wake-ups", format: "%.0f", target: .atMost(0, "0"))
        report.quantity(
            "idle daemon with bridge and hub: CPU in \(Int(seconds)) s",
            (after.cpuSeconds - before.cpuSeconds) * 1000,
            unit: "ms", format: "%.1f ms", target: .reported)
        for watcher in [watch, storeA, storeB] { watcher.stop() }
    }

    private func initialComparison(into report: inout Report, scratch: Scratch) throws {
        let count = 2_000
        let session = try PrivateDconf(scratch: scratch.folder("c"))
        let file = scratch.file("user-\(count).ini")
        try GSettingsBenchmark.dump(keys: count).write(toFile: file, atomically: true, encoding: .utf8)
        session.run(["/usr/bin/dconf", "load", "/org/gnome/"], input: file)
        let rounds = quick ? 2 : 5
        var ours: [Double] = []
        var plain: [Double] = []
        for round in 0..<rounds {
            // A fresh database each round: every key is taken into the store.
            plain.append(
                try measureSeconds {
                    _ = try BenchDaemon(
                        binary: binary, scratch: scratch, name: "plain-\(round)",
                        arguments: ["--schemas", GSettingsBenchmark.schemas], environment: session.environment
                    )
                })
            ours.append(
                try measureSeconds {
                    _ = try BenchDaemon(
                        binary: binary, scratch: scratch, name: "c-\(round)",
                        arguments: ["--dconf", "/org/gnome/", "--schemas", GSettingsBenchmark.schemas],
                        environment: session.environment)
                })
        }
        let dump = median(
            (0..<5).map { _ in measureSeconds { session.run(["/usr/bin/dconf", "dump", "/org/gnome/"]) } })
        report.time(
            "start with a \(count)-key dconf database: the bridge's first comparison",
            ours: median(ours) - median(plain),
            peer: dump, peerName: "dconf dump (reads them)", target: .reported)
        report.seconds("start of the daemon with the bridge, whole", median(ours), target: .reported)
    }
}

/// A watching command (`dconf watch /`, `settingsd watch`): each line it prints, with when it
/// was read.
private final class LineWatch: Sendable {
    private let process = Process()
    private let lines = Mutex<[(text: String, at: Date)]>([])

    init(_ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        Thread.detachNewThread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return }
                let now = Date()
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    self.lines.withLock { $0.append((line.trimmingCharacters(in: .whitespaces), now)) }
                }
            }
        }
    }

    /// When a line ending with `text` arrived (waiting for it, at most 10 s).
    func wait(for text: String) -> Date {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let found = lines.withLock({ lines in
                lines.firstIndex { $0.text.hasSuffix(text) }.map { index in
                    defer { lines.removeSubrange(...index) }
                    return lines[index].at
                }
            }) {
                return found
            }
            usleep(100)
        }
        return deadline
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// Context switches per thread name and CPU of a process, from /proc.
struct ThreadCounters {
    private var switches: [String: Int] = [:]
    let cpuSeconds: Double

    init(pid: Int32) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let name =
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            let status =
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let count = status.split(separator: "\n").filter {
                $0.hasSuffix("ctxt_switches") || $0.contains("ctxt_switches:")
            }
            .compactMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            .reduce(0, +)
            switches[name, default: 0] += count
        }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        let ticks = fields.count > 12 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
        cpuSeconds = ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func wakeups(of thread: String) -> Int { switches[thread] ?? 0 }

    /// Context switches of every thread of the process.
    var totalWakeups: Int { switches.values.reduce(0, +) }
}
