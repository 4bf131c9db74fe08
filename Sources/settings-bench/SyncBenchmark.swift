import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settings-bench sync`: initial sync between two daemons, set-to-remote-watch latency, and
/// catch-up after a reconnect on a large replica.
struct SyncBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        runSuite { scratch in
            var report = Report(title: "sync")
            let a = try BenchDaemon(binary: binary, scratch: scratch, name: "a")
            let keys = quick ? 20_000 : 100_000
            progress("loading \(keys) keys into daemon A")
            try load(keys, into: a)
            progress("starting daemon B with --peer A")
            let clock = ContinuousClock()
            let start = clock.now
            let b = try BenchDaemon(
                binary: binary, scratch: scratch, name: "b", arguments: ["--peer", a.socket])
            try waitForEqualDigests(a.socket, b.socket)
            let socketSeconds = (clock.now - start).seconds
            report.seconds(
                "initial sync, \(keys / 1000)k keys, two daemons", socketSeconds,
                target: .atMost(0.4, "<= 0.4 s (100k)"))
            if selected("ssh") {
                try ssh(into: &report, keys: keys, from: a, scratch: scratch, socketSeconds: socketSeconds)
            }
            if selected("folder") { try folder(into: &report, keys: keys, scratch: scratch) }
            if selected("latency") {
                progress("measuring set-to-remote-watch latency")
                try remoteWatchLatency(into: &report, from: a, to: b)
            }
            if selected("writes") {
                progress("measuring local sets on daemon C while it takes the initial sync from A")
                try writesDuringSync(into: &report, keys: keys, from: a, scratch: scratch)
            }
            if selected("catch-up") { try catchUp(into: &report, daemon: b, scratch: scratch) }
            if selected("sizes") { try initialSyncBySize(into: &report, scratch: scratch) }
            report.print()
        }
    }

    /// An initial sync between two fresh daemons at several store sizes (`--keys N[,N…]`,
    /// default 1,000 to 200,000): how its time grows with the keys.
    private func initialSyncBySize(into report: inout Report, scratch: Scratch) throws {
        let sizes =
            flagValue("--keys").map { $0.split(separator: ",").compactMap { Int($0) } }
            ?? (quick ? [1_000, 10_000] : [1_000, 10_000, 30_000, 100_000, 200_000])
        for keys in sizes {
            progress("initial sync of \(keys) keys between two fresh daemons")
            let a = try BenchDaemon(binary: binary, scratch: scratch, name: "size-a-\(keys)")
            try load(keys, into: a)
            let start = ContinuousClock.now
            let b = try BenchDaemon(
                binary: binary, scratch: scratch, name: "size-b-\(keys)", arguments: ["--peer", a.socket])
            try waitForEqualDigests(a.socket, b.socket)
            report.seconds(
                "initial sync by size: \(keys) keys", (ContinuousClock.now - start).seconds, target: .reported
            )
        }
    }

    func load(_ count: Int, into daemon: BenchDaemon) throws {
        let client = try BlockingClient(socketPath: daemon.socket, timeout: 120)
        for chunk in stride(from: 0, to: count, by: 10_000) {
            let changes = (chunk..<min(chunk + 10_000, count)).map {
                WireRequest.KeyWrite(key: "sync.key.\($0)", value: .integer(Int64($0)))
            }
            try client.request(.setMany(changes: changes))
        }
    }

    private func digest(_ socket: String) throws -> String? {
        try DaemonStatus(fields: BlockingClient(socketPath: socket).request(.status)).digest
    }

    func waitForEqualDigests(_ first: String, _ second: String, timeout: Double = 300) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try digest(first) != digest(second) {
            guard Date() < deadline else { throw SettingsError(.timeout, "daemons did not converge") }
            usleep(2_000)
        }
    }

    private func remoteWatchLatency(into report: inout Report, from a: BenchDaemon, to b: BenchDaemon) throws
    {
        let watcher = try BlockingClient(socketPath: b.socket, timeout: 10)
        try watcher.request(.watch(filter: .keys(["sync.latency"])))
        let setter = try BlockingClient(socketPath: a.socket)
        let count = quick ? 300 : 3_000
        var latencies: [Double] = []
        for _ in 0..<count {
            let clock = ContinuousClock()
            let sent = clock.now
            try setter.request(.set(key: "sync.latency", value: .integer(Int64(latencies.count))))
            _ = try watcher.nextEvent()
            latencies.append((clock.now - sent).seconds)
        }
        latencies.sort()
        report.latency(
            "set on A -> watch event on B", sorted: latencies, target: .percentiles(p50: 0.002, p99: 0.010))
    }

    /// Times local sets on a replica while it takes an initial sync of `keys` keys (each
    /// arriving batch holds the store's write lock while it commits), beside the same sets once
    /// the two agree.
    private func writesDuringSync(into report: inout Report, keys: Int, from a: BenchDaemon, scratch: Scratch)
        throws
    {
        let c = try BenchDaemon(binary: binary, scratch: scratch, name: "c", arguments: ["--peer", a.socket])
        let client = try BlockingClient(socketPath: c.socket, timeout: 30)
        let last = "sync.key.\(keys - 1)"
        func timedSet(_ index: Int) throws -> Double {
            let clock = ContinuousClock()
            let sent = clock.now
            try client.request(.set(key: "sync.local", value: .integer(Int64(index))))
            return (clock.now - sent).seconds
        }
        var during: [Double] = []
        let deadline = Date().addingTimeInterval(300)
        // The batches arrive in A's order, so the last key loaded is the last to land.
        while try during.isEmpty || during.count % 20 != 0 || client.request(.get(key: last))["value"] == nil
        {
            guard Date() < deadline else {
                throw SettingsError(.timeout, "daemon C did not receive '\(last)'")
            }
            during.append(try timedSet(during.count))
        }
        try waitForEqualDigests(a.socket, c.socket)
        let idle = try (0..<max(during.count, 200)).map { try timedSet(during.count + $0) }
        report.latency(
            "set on C while C takes the initial sync (\(during.count) sets)", sorted: during.sorted(),
            peer: idle.sorted(), peerName: "the same sets once C and A agree",
            target: .percentiles(p50: 0.002, p99: 0.05))
    }

    private func catchUp(into report: inout Report, daemon: BenchDaemon, scratch: Scratch) throws {
        let size = quick ? 100_000 : 1_000_000
        progress("building a \(size)-key embedded replica and syncing it to daemon B")
        let store = try Settings(path: scratch.file("embedded.sqlite"))
        try store.transaction { transaction in
            for index in 0..<size { try transaction.set(index, forKey: "big.\(index)") }
        }
        let replicator = Replicator(settings: store)
        let first = replicator.sync(with: daemon.socket)
        try waitForDigest(of: store, at: daemon.socket, timeout: 600)
        // Like `settingsd sync --wait`: everything acknowledged, and the pair found to agree.
        while !replicator.peers.contains(where: { $0.acknowledgedThrough >= store.sequence }) { usleep(500) }
        try waitForAgreement(of: replicator)
        first.stop()
        progress("reconnecting after 100 changes")
        while try DaemonStatus(fields: BlockingClient(socketPath: daemon.socket).request(.status)).peers
            .contains(where: {
                $0.isConnected && $0.replica == store.replicaID
            })
        { usleep(1_000) }
        try store.transaction { transaction in
            for index in 0..<100 { try transaction.set(-index, forKey: "big.\(index * 997)") }
        }
        let clock = ContinuousClock()
        let start = clock.now
        let second = replicator.sync(with: daemon.socket)
        try waitForDigest(of: store, at: daemon.socket, timeout: 60)
        let elapsed = (clock.now - start).seconds
        report.seconds(
            "catch-up of 100 changes on a \(size / 1000)k-key replica", elapsed,
            target: .atMost(0.1, "< 100 ms"))
        try waitForAgreement(of: replicator)
        second.stop()
        try antiEntropy(into: &report, store: store, path: scratch.file("embedded.sqlite"), daemon: daemon)
    }

    /// Damages one entry of the embedded replica's file behind its back, reopens it, and times
    /// how long the connected pair takes to find and repair the difference and agree again.
    private func antiEntropy(into report: inout Report, store: Settings, path: String, daemon: BenchDaemon)
        throws
    {
        let size = store.usage.keys
        store.close()
        guard RawSQLite.execute("DELETE FROM entries WHERE key = 'big.500'", onFileAt: path) else {
            throw SettingsError(.io, "cannot damage '\(path)'", path: path)
        }
        let damaged = try Settings(path: path)
        progress("anti-entropy: one entry missing among \(size) keys")
        let clock = ContinuousClock()
        let start = clock.now
        let repairer = Replicator(settings: damaged)
        let link = repairer.sync(with: daemon.socket)
        try waitForAgreement(of: repairer, repaired: true)
        let elapsed = (clock.now - start).seconds
        link.stop()
        guard damaged.value(forKey: "big.500") == 500 else {
            throw SettingsError(.io, "anti-entropy did not restore the damaged entry")
        }
        report.seconds(
            "anti-entropy: find and repair 1 key among \(size / 1000)k (connect to agreed)", elapsed,
            target: .atMost(1, "< 1 s (1M)"))
    }

    /// Waits until the store's peer is connected and agrees (after a repair, when `repaired`).
    private func waitForAgreement(of replicator: Replicator, repaired: Bool = false, timeout: Double = 60)
        throws
    {
        let deadline = Date().addingTimeInterval(timeout)
        while !replicator.peers.contains(where: {
            $0.isConnected && $0.agreement == .agreed && (!repaired || $0.repairedKeys > 0)
        }) {
            guard Date() < deadline else { throw SettingsError(.timeout, "the replicas did not agree") }
            usleep(500)
        }
    }

    private func waitForDigest(of store: Settings, at socket: String, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try digest(socket) != store.digest {
            guard Date() < deadline else { throw SettingsError(.timeout, "the daemon did not catch up") }
            usleep(500)
        }
    }

    func progress(_ message: String) {
        FileHandle.standardError.write(Data("sync: \(message)\n".utf8))
    }
}
