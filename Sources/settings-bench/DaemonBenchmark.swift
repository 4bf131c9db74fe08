import Foundation
import SettingsStore
import Synchronization

/// `settings-bench daemon`: the CLI as a whole process beside the sqlite3 CLI (and dconf), round
/// trips on one connection, 32 concurrent durable writers, and set-to-watch latency.
struct DaemonBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        let scratch = Scratch()
        defer { scratch.cleanUp() }
        do {
            let daemon = try BenchDaemon(binary: binary, scratch: scratch)
            print("settingsd binary: \(binary) (\(Self.linkage(of: binary)))")
            var report = Report(title: "daemon")
            try processWallTime(into: &report, daemon: daemon, scratch: scratch)
            try roundTrips(into: &report, daemon: daemon)
            try concurrentWriters(into: &report, daemon: daemon, scratch: scratch)
            try watchLatency(into: &report, daemon: daemon)
            report.print()
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            exit(1)
        }
    }

    private func processWallTime(into report: inout Report, daemon: BenchDaemon, scratch: Scratch) throws {
        try BlockingClient(socketPath: daemon.socket).request(.set(key: "bench.key", value: "value"))
        let database = scratch.file("cli.sqlite")
        guard let sqlite = ChildProcess.which("sqlite3") else {
            report.value("settingsd get (process)", "sqlite3 not installed: no peer", target: "<= 2x sqlite3")
            return
        }
        ChildProcess.run([
            sqlite, database,
            "CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID; INSERT INTO kv VALUES ('bench.key', 'value');",
        ])
        let count = quick ? 50 : 300
        let ours = ["get", "bench.key", "--socket", daemon.socket]
        let peer = [sqlite, database, "SELECT value FROM kv WHERE key = 'bench.key'"]
        for _ in 0..<10 {  // warm the page cache for both
            ChildProcess.run([binary] + ours)
            ChildProcess.run(peer)
        }
        var oursTimes: [Double] = []
        var peerTimes: [Double] = []
        for _ in 0..<count {
            oursTimes += ChildProcess.wallTimes([binary] + ours, count: 1)
            peerTimes += ChildProcess.wallTimes(peer, count: 1)
        }
        report.time(
            "settingsd get (whole process)", ours: median(oursTimes), peer: median(peerTimes),
            peerName: "sqlite3 CLI", target: "<= 2x")
        if let dconf = ChildProcess.which("dconf") {
            let dconfTimes = ChildProcess.wallTimes([dconf, "read", "/bench/key"], count: count)
            report.time(
                "settingsd get (whole process)", ours: median(oursTimes), peer: median(dconfTimes),
                peerName: "dconf read", target: "reported")
        }
    }

    private func roundTrips(into report: inout Report, daemon: BenchDaemon) throws {
        let client = try BlockingClient(socketPath: daemon.socket)
        let count = quick ? 5_000 : 50_000
        let single = try measureRate(count) { _ in _ = try client.request(.get(key: "bench.key")) }
        report.value("get round trips, one connection", Report.format(rate: single), target: ">= 15 k/s")
        let batch = 1_000
        let requests = [WireRequest](repeating: .get(key: "bench.key"), count: batch)
        let pipelined =
            try Double(count * 4)
            / measureSeconds {
                for _ in 0..<(count * 4 / batch) { _ = try client.pipeline(requests) }
            }
        report.value("get, pipelined 1000 deep", Report.format(rate: pipelined), target: ">= 100 k/s")
    }

    private func concurrentWriters(into report: inout Report, daemon: BenchDaemon, scratch: Scratch) throws {
        let writers = 32
        let perWriter = quick ? 300 : 2_000
        let socket = daemon.socket
        let failures = Atomic<Int>(0)
        let clients = try (0..<writers).map { _ in UncheckedClient(try BlockingClient(socketPath: socket)) }
        // One thread per writer: concurrentPerform would run only as many writers as there are cores.
        let seconds = measureSeconds {
            let group = DispatchGroup()
            for writer in 0..<writers {
                group.enter()
                Thread.detachNewThread {
                    for index in 0..<perWriter {
                        let key = "writer.\(writer).\(index % 100)"
                        if (try? clients[writer].client.request(.set(key: key, value: .integer(Int64(index)))))
                            == nil
                        {
                            failures.add(1, ordering: .relaxed)
                        }
                    }
                    group.leave()
                }
            }
            group.wait()
        }
        let ours = Double(writers * perWriter) / seconds
        let raw = RawSQLite(path: scratch.file("floor.sqlite"))
        let floor = measureRate(quick ? 5_000 : 30_000) { raw.set("writer.\($0 % 3200)", Int64($0)) }
        report.rate(
            "32 clients, durable sets (total)", ours: ours, peer: floor, peerName: "raw SQLite 1 tx/write",
            target: ">= 0.7x")
        if failures.load(ordering: .relaxed) > 0 {
            print("warning: \(failures.load(ordering: .relaxed)) sets failed")
        }
    }

    private func watchLatency(into report: inout Report, daemon: BenchDaemon) throws {
        let watcher = try BlockingClient(socketPath: daemon.socket, timeout: 10)
        try watcher.request(.watch(filter: .keys(["bench.latency"])))
        let setter = try BlockingClient(socketPath: daemon.socket)
        let count = quick ? 500 : 5_000
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for _ in 0..<count {
            let sent = Self.monotonicNanoseconds()
            try setter.request(.set(key: "bench.latency", value: .integer(sent)))
            let (_, change) = try watcher.nextEvent()
            guard case .integer(let stamp)? = change.changes.first?.value else { continue }
            latencies.append(Double(Self.monotonicNanoseconds() - stamp) / 1e9)
        }
        latencies.sort()
        let p50 = latencies[latencies.count / 2] * 1e3
        let p99 = latencies[latencies.count * 99 / 100] * 1e3
        report.value(
            "set -> other client's watch event", String(format: "p50 %.2f ms, p99 %.2f ms", p50, p99),
            target: "< 1 ms / < 5 ms")
    }

    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Whether the binary links the Swift runtime statically (it starts about twice as fast).
    static func linkage(of binary: String) -> String {
        guard let data = FileManager.default.contents(atPath: binary) else { return "unreadable" }
        return data.range(of: Data("libswiftCore.so".utf8)) == nil
            ? "Swift runtime linked statically"
            : "Swift runtime linked dynamically: build with --static-swift-stdlib for start-up figures"
    }
}

/// A blocking client used by exactly one writer thread.
private struct UncheckedClient: @unchecked Sendable {
    let client: BlockingClient
    init(_ client: BlockingClient) { self.client = client }
}
