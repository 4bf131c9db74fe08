import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

/// `settings-bench daemon`: the CLI as a whole process beside the sqlite3 CLI (and dconf), round
/// trips on one connection, 32 concurrent durable writers, set-to-watch latency, and resuming
/// (a replayed watch, conditional sets, `settingsd set` as a process).
struct DaemonBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        runSuite { scratch in
            let daemon = try BenchDaemon(binary: binary, scratch: scratch)
            note("settingsd binary: \(binary) (\(Self.linkage(of: binary)))")
            let daemonBinary = Self.daemonBinary(beside: binary)
            note("settingsd-daemon binary: \(daemonBinary) (\(Self.linkage(of: daemonBinary)))")
            var report = Report(title: "daemon")
            let redis = RedisPeer(scratch: scratch, name: "redis-memory")
            if selected("process") {
                try processWallTime(into: &report, daemon: daemon, scratch: scratch, redis: redis)
            }
            if selected("round-trips") { try roundTrips(into: &report, daemon: daemon, redis: redis) }
            if selected("idle") { try idleConnections(into: &report, daemon: daemon, redis: redis) }
            if selected("writers") {
                let writerRate = try concurrentWriters(into: &report, daemon: daemon, scratch: scratch)
                concurrentRedisWriters(into: &report, ours: writerRate, scratch: scratch)
                try concurrentFullDurabilityWriters(into: &report, scratch: scratch)
            }
            if selected("watch") { try watchLatency(into: &report, daemon: daemon) }
            if selected("resume") { try resume(into: &report, daemon: daemon) }
            report.print()
        }
    }

    private func processWallTime(
        into report: inout Report, daemon: BenchDaemon, scratch: Scratch, redis: RedisPeer?
    )
        throws
    {
        try BlockingClient(socketPath: daemon.socket).request(.set(key: "bench.key", value: "value"))
        let database = scratch.file("cli.sqlite")
        guard let sqlite = ChildProcess.which("sqlite3") else {
            note("settingsd get (process): sqlite3 not installed, no peer")
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
            peerName: "sqlite3 CLI", target: .ratio(atMost: 1.2))
        if let dconf = ChildProcess.which("dconf"), Self.prepareDconf(scratch: scratch) {
            let dconfTimes = ChildProcess.wallTimes([dconf, "read", "/bench/key"], count: count)
            report.time(
                "settingsd get (whole process)", ours: median(oursTimes), peer: median(dconfTimes),
                peerName: "dconf read", target: .ratio(atMost: 1))
        }
        if let redis {
            redisProcessTime(into: &report, oursMedian: median(oursTimes), redis: redis, count: count)
        }
    }

    /// A dconf database holding /bench/key, read without D-Bus through $XDG_CONFIG_HOME.
    private static func prepareDconf(scratch: Scratch) -> Bool {
        let keyfiles = scratch.file("dconf-keyfiles")
        try? FileManager.default.createDirectory(atPath: keyfiles, withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(
            atPath: scratch.file("config/dconf"), withIntermediateDirectories: true)
        try? "[bench]\nkey='value'\n".write(toFile: keyfiles + "/bench", atomically: true, encoding: .utf8)
        guard let dconf = ChildProcess.which("dconf"),
            ChildProcess.run([dconf, "compile", scratch.file("config/dconf/user"), keyfiles]) == 0
        else { return false }
        setenv("XDG_CONFIG_HOME", scratch.file("config"), 1)
        return true
    }

    private func redisProcessTime(into report: inout Report, oursMedian: Double, redis: RedisPeer, count: Int)
    {
        guard let cli = ChildProcess.which("redis-cli") else { return }
        ChildProcess.run([cli, "-s", redis.socket, "SET", "bench.key", "value"])
        let times = ChildProcess.wallTimes([cli, "-s", redis.socket, "GET", "bench.key"], count: count)
        report.time(
            "settingsd get (whole process)", ours: oursMedian, peer: median(times), peerName: "redis-cli GET",
            target: .reported)
    }

    /// How many single round trips a round-trip figure times.
    private var roundTripCount: Int { quick ? 5_000 : 50_000 }

    /// A client of `daemon` with `bench.key` set: the key Redis is asked for too, so both answer
    /// with a value, whichever parts run.
    private static func benchClient(_ daemon: BenchDaemon) throws -> BlockingClient {
        let client = try BlockingClient(socketPath: daemon.socket)
        try client.request(.set(key: "bench.key", value: "value"))
        return client
    }

    /// A connection to `redis` with `bench.key` set, or nil when there is no Redis.
    private static func benchConnection(_ redis: RedisPeer?) -> RedisPeer.Connection? {
        guard let redis, let connection = try? RedisPeer.Connection(path: redis.socket) else { return nil }
        connection.send(RedisPeer.Connection.command(["SET", "bench.key", "value"]))
        return connection
    }

    private static let redisGet = RedisPeer.Connection.command(["GET", "bench.key"])

    private func roundTrips(into report: inout Report, daemon: BenchDaemon, redis: RedisPeer?) throws {
        let client = try Self.benchClient(daemon)
        let count = roundTripCount
        let batch = 1_000
        let requests = [WireRequest](repeating: .get(key: "bench.key"), count: batch)
        let single = try measureRate(count) { _ in _ = try client.request(.get(key: "bench.key")) }
        let pipelined =
            try Double(count * 20)
            / measureSeconds {
                for _ in 0..<(count * 20 / batch) { _ = try client.pipeline(requests) }
            }
        guard let connection = Self.benchConnection(redis) else {
            report.rate("get round trips, one connection", single, target: .atLeast(15_000, ">= 15 k/s"))
            report.rate("get, pipelined 1000 deep", pipelined, target: .atLeast(100_000, ">= 100 k/s"))
            return
        }
        let get = Self.redisGet
        let redisSingle = measureRate(count) { _ in connection.send(get) }
        let redisPipelined =
            Double(count * 20)
            / measureSeconds {
                for _ in 0..<(count * 20 / batch) { connection.send(get, times: batch) }
            }
        report.rate(
            "get round trips, one connection", ours: single, peer: redisSingle, peerName: "Redis GET",
            target: .ratio(atLeast: 1))
        report.rate(
            "get, pipelined 1000 deep", ours: pipelined, peer: redisPipelined, peerName: "Redis GET",
            target: .ratio(atLeast: 0.5))
    }

    /// Round trips on one connection while 300 others stay open and silent, as apps' watch
    /// connections do: an event loop that looks at every descriptor each round pays for them all.
    private func idleConnections(into report: inout Report, daemon: BenchDaemon, redis: RedisPeer?) throws {
        let name = "get round trips, \(Self.idleConnections) idle connections open"
        let count = roundTripCount
        let idle = try (0..<Self.idleConnections).map { _ in try BlockingClient(socketPath: daemon.socket) }
        let client = try Self.benchClient(daemon)
        let ours = try measureRate(count) { _ in _ = try client.request(.get(key: "bench.key")) }
        withExtendedLifetime(idle) {}
        guard let redis, let connection = Self.benchConnection(redis),
            let idleRedis = try? (0..<Self.idleConnections).map({ _ in
                try RedisPeer.Connection(path: redis.socket)
            })
        else {
            report.rate(name, ours, target: .atLeast(15_000, ">= 15 k/s"))
            return
        }
        let get = Self.redisGet
        let peer = measureRate(count) { _ in connection.send(get) }
        withExtendedLifetime(idleRedis) {}
        report.rate(name, ours: ours, peer: peer, peerName: "Redis GET", target: .ratio(atLeast: 1))
    }

    private static let idleConnections = 300

    /// Returns the writers' total rate.
    private func concurrentWriters(into report: inout Report, daemon: BenchDaemon, scratch: Scratch) throws
        -> Double
    {
        let ours = try setRate(daemon)
        let raw = RawSQLite(path: scratch.file("floor.sqlite"))
        let floor = measureRate(quick ? 5_000 : 30_000) { raw.set("writer.\($0 % 3200)", Int64($0)) }
        report.rate(
            "32 clients, durable sets (total)", ours: ours, peer: floor, peerName: "raw SQLite 1 tx/write",
            target: .ratio(atLeast: 2))
        return ours
    }

    /// 32 blocking clients setting their own 100 keys over and over on `daemon`: the total rate.
    private func setRate(_ daemon: BenchDaemon) throws -> Double {
        let socket = daemon.socket
        let clients = try (0..<Self.writers).map { _ in
            UncheckedClient(try BlockingClient(socketPath: socket))
        }
        let (rate, failures) = concurrentRate { writer, index in
            let key = "writer.\(writer).\(index % 100)"
            return (try? clients[writer].client.request(.set(key: key, value: .integer(Int64(index))))) != nil
        }
        if failures > 0 { note("warning: \(failures) sets failed") }
        return rate
    }

    /// The same 32 writers against a daemon that fsyncs every commit (`--durability full`),
    /// beside raw SQLite fsyncing every transaction: where group commit pays most.
    private func concurrentFullDurabilityWriters(into report: inout Report, scratch: Scratch) throws {
        let daemon = try BenchDaemon(
            binary: binary, scratch: scratch, name: "full", arguments: ["--durability", "full"])
        let ours = try setRate(daemon)
        let raw = RawSQLite(path: scratch.file("floor-full.sqlite"), synchronous: "FULL")
        let floor = measureRate(quick ? 300 : 2_000) { raw.set("writer.\($0 % 3200)", Int64($0)) }
        report.rate(
            "32 clients, durable sets, --durability full", ours: ours, peer: floor,
            peerName: "raw SQLite 1 tx/write, synchronous FULL", target: .ratio(atLeast: 2))
    }

    /// The same 32 writers, each a blocking connection, against Redis with an append-only file
    /// written every second (`appendfsync everysec`: a process crash loses nothing, like SQLite's
    /// WAL at `synchronous = NORMAL`).
    private func concurrentRedisWriters(into report: inout Report, ours: Double, scratch: Scratch) {
        guard let redis = RedisPeer(scratch: scratch, name: "redis-aof", appendOnly: true),
            let connections = try? (0..<Self.writers).map({ _ in
                UncheckedRedis(try RedisPeer.Connection(path: redis.socket))
            })
        else { return }
        let (peer, _) = concurrentRate { writer, index in
            connections[writer].connection.send(
                RedisPeer.Connection.command(["SET", "writer.\(writer).\(index % 100)", String(index)]))
            return true
        }
        report.rate(
            "32 clients, durable sets (total)", ours: ours, peer: peer,
            peerName: "Redis SET, appendonly everysec", target: .ratio(atLeast: 1))
    }

    private static let writers = 32

    /// Runs `write(writer, index)` on 32 threads at once, each `perWriter` times; returns the
    /// total rate and how many writes failed. One thread per writer: concurrentPerform would run
    /// only as many writers as there are cores.
    private func concurrentRate(_ write: @escaping @Sendable (Int, Int) -> Bool) -> (
        rate: Double, failures: Int
    ) {
        let perWriter = quick ? 300 : 2_000
        let failures = Atomic<Int>(0)
        let seconds = measureSeconds {
            let group = DispatchGroup()
            for writer in 0..<Self.writers {
                group.enter()
                Thread.detachNewThread {
                    for index in 0..<perWriter where !write(writer, index) {
                        failures.add(1, ordering: .relaxed)
                    }
                    group.leave()
                }
            }
            group.wait()
        }
        return (Double(Self.writers * perWriter) / seconds, failures.load(ordering: .relaxed))
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
            let change = try watcher.nextEvent().change
            guard case .integer(let stamp)? = change.changes.first?.value else { continue }
            latencies.append(Double(Self.monotonicNanoseconds() - stamp) / 1e9)
        }
        latencies.sort()
        report.latency(
            "set -> other client's watch event", sorted: latencies,
            target: .percentiles(p50: 0.001, p99: 0.005))
    }

    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// `settingsd-daemon`, which `settingsd run` continues in, next to `binary`.
    static func daemonBinary(beside binary: String) -> String {
        URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("settingsd-daemon")
            .path
    }

    /// How `binary` is linked: statically (no program interpreter), or dynamically with the Swift
    /// runtime inside (`--static-swift-stdlib`, which starts about twice as fast) or beside it.
    static func linkage(of binary: String) -> String {
        guard let data = FileManager.default.contents(atPath: binary) else { return "unreadable" }
        if !hasInterpreter(data) { return "statically linked" }
        return data.range(of: Data("libswiftCore.so".utf8)) == nil
            ? "Swift runtime linked statically"
            : "Swift runtime linked dynamically: build with --static-swift-stdlib for start-up figures"
    }

    /// Whether an ELF64 file names a program interpreter (`PT_INTERP`): a dynamically linked one.
    private static func hasInterpreter(_ elf: Data) -> Bool {
        let bytes = [UInt8](elf.prefix(1 << 16))
        func integer(at offset: Int, size: Int) -> Int {
            guard offset + size <= bytes.count else { return 0 }
            return (0..<size).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        let headers = integer(at: 32, size: 8)
        let size = integer(at: 54, size: 2)
        let count = integer(at: 56, size: 2)
        let interpreter = 3
        return (0..<count).contains { integer(at: headers + $0 * size, size: 4) == interpreter }
    }
}
