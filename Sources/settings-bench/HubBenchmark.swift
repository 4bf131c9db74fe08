import Foundation
import PostgresFixture
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

/// `settings-bench hub`: daemons syncing through a PostgreSQL hub (a private cluster this suite
/// starts, or `$SETTINGSD_HUB` as an administrator), beside raw libpq upserts.
struct HubBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        runSuite { scratch in
            let hub = try HubUnderTest()
            var report = Report(title: "hub (\(hub.description))")
            progress("hub schema and a role")
            _ = try HubAdministration.initialize(url: hub.adminURL)
            if selected("push") { try pushThroughput(into: &report, hub: hub, scratch: scratch) }
            if selected("fanout") { try fanOutLatency(into: &report, hub: hub, scratch: scratch) }
            if selected("fanout100") {
                // A fleet's fan-out: 101 direct connections (the private cluster allows 200).
                try fanOutLatency(
                    into: &report, hub: hub, scratch: scratch, others: 100,
                    target: .percentiles(p50: 0.050, p99: 0.250))
            }
            if selected("writers") { try concurrentWriters(into: &report, hub: hub, scratch: scratch) }
            if selected("sealed") {
                try SealedBenchmark(
                    count: quick ? 20_000 : 100_000, hubURL: hub.newNamespace, scratch: scratch
                )
                .run(into: &report)
            }
            report.print()
        }
    }

    /// Push throughput beside raw upserts, then the initial sync of a fresh daemon and the
    /// catch-up of 100 changes, on the namespace just filled.
    private func pushThroughput(into report: inout Report, hub: HubUnderTest, scratch: Scratch) throws {
        let url = try hub.newNamespace()
        let count = quick ? 20_000 : 100_000
        progress("pushing \(count) keys from an embedded store")
        let store = try Settings(path: scratch.file("pusher.sqlite"))
        try store.transaction { transaction in
            for index in 0..<count { try transaction.set(index, forKey: "hub.key.\(index)") }
        }
        var pusher: HubLink?
        let pushSeconds = try measureSeconds {
            let link = try Replicator(settings: store).sync(withHub: HubConfiguration(url: url))
            pusher = link
            try waitFor(timeout: 300) { link.status.isConnected && link.status.pendingUp == 0 }
        }
        pusher?.stop()
        progress("raw libpq upserts of \(count) rows")
        let rawSeconds = try RawPostgres(conninfo: hub.adminURL).upsertSeconds(count: count)
        report.rate(
            "push \(count / 1000)k keys to the hub", ours: Double(count) / pushSeconds,
            peer: Double(count) / rawSeconds, peerName: "raw INSERT ON CONFLICT",
            target: .ratio(atLeast: 0.5))

        progress("initial sync of a fresh daemon")
        let clock = ContinuousClock()
        let start = clock.now
        let fresh = try BenchDaemon(
            binary: binary, scratch: scratch, name: "fresh", hub: url)
        try waitFor(timeout: 300) { try keyCount(fresh) == count }
        report.seconds(
            "initial sync of \(count / 1000)k keys from the hub to a fresh daemon",
            (clock.now - start).seconds,
            target: .atMost(3, "< 3 s (100k)"))
        fresh.process.terminate()
        fresh.process.waitUntilExit()
        try catchUp(into: &report, store: store, url: url, hub: hub, scratch: scratch)
    }

    /// Grows the namespace to its full size (1M, or 100k quick), syncs a second embedded store
    /// with it, and times that store's reconnect until it has applied 100 changes made meanwhile.
    private func catchUp(
        into report: inout Report, store: Settings, url: String, hub: HubUnderTest, scratch: Scratch
    ) throws {
        let size = quick ? 100_000 : 1_000_000
        progress("growing the namespace to \(size) keys")
        let existing = store.usage.keys
        try store.transaction { transaction in
            for index in existing..<size { try transaction.set(index, forKey: "hub.key.\(index)") }
        }
        let replicator = Replicator(settings: store)
        var link = try replicator.sync(withHub: HubConfiguration(url: url))
        try waitFor(timeout: 600) { link.status.isConnected && link.status.pendingUp == 0 }
        link.stop()
        progress("syncing a second store with all \(size) keys")
        let follower = try Settings(path: scratch.file("follower.sqlite"))
        let followerReplicator = Replicator(settings: follower)
        var followerLink = try followerReplicator.sync(withHub: HubConfiguration(url: url))
        try waitFor(timeout: 600) { follower.usage.keys == size }
        followerLink.stop()
        progress("catch-up of 100 changes")
        try store.transaction { transaction in
            for index in 0..<100 { try transaction.set(-index, forKey: "hub.key.\(index * 97)") }
        }
        link = try replicator.sync(withHub: HubConfiguration(url: url))
        try waitFor(timeout: 60) { link.status.isConnected && link.status.pendingUp == 0 }
        link.stop()
        let seconds = try measureSeconds {
            followerLink = try followerReplicator.sync(withHub: HubConfiguration(url: url))
            try waitFor(timeout: 60) { follower.value(forKey: "hub.key.9603") == .integer(-99) }
        }
        followerLink.stop()
        report.seconds(
            "catch-up of 100 changes on a \(size / 1000)k-key namespace (reconnect to applied)", seconds,
            target: .atMost(0.2, "< 200 ms (1M)"))
        try antiEntropy(into: &report, replicator: replicator, url: url, hub: hub, size: size)
    }

    /// The PostgreSQL side of a comparison on the full namespace (its digest, then its bucket
    /// sums), and a whole repair: one row deleted by hand, from connecting to agreed again.
    private func antiEntropy(
        into report: inout Report, replicator: Replicator, url: String, hub: HubUnderTest, size: Int
    ) throws {
        let link = try replicator.sync(withHub: HubConfiguration(url: url))
        try waitFor(timeout: 120) { link.status.agreement == "agreed" }
        let namespace = link.status.namespace ?? ""
        link.stop()
        let raw = try RawPostgres(conninfo: hub.adminURL)
        let scope = "FROM settingsd.entries WHERE namespace = '\(namespace)'"
        // The link's own statements, on a connection of the hub's owner.
        let admin = try HubNamespace(
            connection: PostgresConnection(conninfo: hub.adminURL), namespace: namespace, listens: false)
        let digest = try measureSeconds { _ = try admin.digest() }
        let buckets = try measureSeconds { _ = try admin.bucketSums() }
        report.seconds(
            "hub anti-entropy: digest of the \(size / 1000)k-row namespace (PostgreSQL)", digest,
            target: .atMost(1, "< 1 s"))
        report.seconds(
            "hub anti-entropy: its 4096 bucket sums (PostgreSQL)", buckets, target: .atMost(1, "< 1 s"))
        try raw.execute("DELETE \(scope) AND key = 'hub.key.4242'")
        let seconds = try measureSeconds {
            let repairing = try replicator.sync(withHub: HubConfiguration(url: url))
            try waitFor(timeout: 120) {
                repairing.status.repairedKeys >= 1 && repairing.status.agreement == "agreed"
            }
            repairing.stop()
        }
        report.seconds(
            "hub anti-entropy: a row deleted by hand, \(size / 1000)k keys (connect to agreed again)",
            seconds,
            target: .atMost(3, "< 3 s"))
    }

    /// Starts `count` daemons on the hub namespace `url` and waits until each is connected to it.
    private func connectedDaemons(
        _ count: Int, named name: String, hub url: String, scratch: Scratch
    ) throws -> [BenchDaemon] {
        let daemons = try (0..<count).map {
            try BenchDaemon(
                binary: binary, scratch: scratch, name: "\(name)\($0)", hub: url)
        }
        try waitFor(timeout: 30) { try daemons.allSatisfy { try hubConnected($0) } }
        return daemons
    }

    /// A set on one daemon, timed to the watch event on each of `others` others.
    private func fanOutLatency(
        into report: inout Report, hub: HubUnderTest, scratch: Scratch, others: Int = 10,
        target: Target = .percentiles(p50: 0.020, p99: 0.100)
    ) throws {
        let url = try hub.newNamespace()
        progress("starting \(others + 1) daemons on one namespace")
        let daemons = try connectedDaemons(others + 1, named: "fan\(others)-", hub: url, scratch: scratch)
        // The daemons must outlive the measurement (ARC may end an unused value's life early).
        defer { withExtendedLifetime(daemons) {} }
        let watchers = try daemons.dropFirst().map { daemon in
            let client = try BlockingClient(socketPath: daemon.socket, timeout: 10)
            try client.request(.watch(filter: .keys(["hub.latency"])))
            return UncheckedClient(client)
        }
        let setter = try BlockingClient(socketPath: daemons[0].socket)
        let rounds = quick ? 30 : 200
        var latencies: [Double] = []
        for round in 0..<rounds {
            // Spaced as a person makes changes: a link spaces the rounds that notifications cause
            // `HubConnector.notificationInterval` (50 ms) apart, which back-to-back sets would measure.
            Thread.sleep(forTimeInterval: 0.06)
            let clock = ContinuousClock()
            let sent = clock.now
            let arrivals = Mutex<[Double]>([])
            let group = DispatchGroup()
            for watcher in watchers {
                group.enter()
                Thread.detachNewThread {
                    _ = try? watcher.client.nextEvent()
                    arrivals.withLock { $0.append((clock.now - sent).seconds) }
                    group.leave()
                }
            }
            try setter.request(.set(key: "hub.latency", value: .integer(Int64(round))))
            group.wait()
            latencies += arrivals.withLock { $0 }
        }
        latencies.sort()
        report.latency(
            "set on one daemon -> watch event on each of \(others) others", sorted: latencies, target: target)
    }

    /// Ten daemons each writing 1,000 keys at once, timed until every one holds all 10,000.
    private func concurrentWriters(into report: inout Report, hub: HubUnderTest, scratch: Scratch) throws {
        let url = try hub.newNamespace()
        progress("10 daemons writing 1,000 keys each")
        let daemons = try connectedDaemons(10, named: "writer", hub: url, scratch: scratch)
        defer { withExtendedLifetime(daemons) {} }
        let seconds = try measureSeconds {
            let group = DispatchGroup()
            for (index, daemon) in daemons.enumerated() {
                group.enter()
                let socket = daemon.socket
                Thread.detachNewThread {
                    defer { group.leave() }
                    guard let client = try? BlockingClient(socketPath: socket) else { return }
                    for chunk in stride(from: 0, to: 1_000, by: 100) {
                        let changes = (chunk..<chunk + 100).map {
                            WireRequest.KeyWrite(key: "w\(index).k\($0)", value: .integer(Int64($0)))
                        }
                        _ = try? client.request(.setMany(changes: changes))
                    }
                }
            }
            group.wait()
            try waitFor(timeout: 120) { try daemons.allSatisfy { try keyCount($0) == 10_000 } }
        }
        report.seconds(
            "10 daemons each writing 1,000 keys at once: all converged", seconds, target: .atMost(5, "< 5 s"))
    }

    private func keyCount(_ daemon: BenchDaemon) throws -> Int {
        try DaemonStatus(fields: BlockingClient(socketPath: daemon.socket).request(.status)).keys
    }

    private func hubConnected(_ daemon: BenchDaemon) throws -> Bool {
        try DaemonStatus(fields: BlockingClient(socketPath: daemon.socket).request(.status)).hubs.first?
            .isConnected
            == true
    }

    private func value(_ daemon: BenchDaemon, _ key: String) throws -> JSONValue? {
        try BlockingClient(socketPath: daemon.socket).request(.get(key: key))["value"]
    }

    private func waitFor(timeout: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw SettingsError(.timeout, "hub benchmark: a wait timed out") }
            usleep(500)
        }
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("hub: \(message)\n".utf8))
    }
}

/// The PostgreSQL the suite runs against: `$SETTINGSD_HUB` (a role that may create roles), or a
/// private cluster it starts.
struct HubUnderTest: CustomStringConvertible {
    let adminURL: String
    private let cluster: PostgresCluster?

    init() throws {
        if let url = SettingsPaths.hubFromEnvironment {
            adminURL = url
            cluster = nil
        } else {
            let cluster = try PostgresCluster.shared()
            self.cluster = cluster
            adminURL = cluster.conninfo()
        }
    }

    var description: String { cluster == nil ? "$SETTINGSD_HUB" : "a private PostgreSQL cluster" }

    /// A connection string for a fresh role, so each measurement has a namespace of its own.
    func newNamespace() throws -> String {
        if let cluster {
            let role = try cluster.makeRole("bench")
            return cluster.conninfo(user: role.name, password: role.password)
        }
        // Against an existing hub: a namespace per run, for the administrator's own role.
        return adminURL
    }
}
