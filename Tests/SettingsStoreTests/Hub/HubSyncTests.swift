import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Hub tests run against a private PostgreSQL cluster (`PostgresCluster`).
extension HubReliability {
    @Suite(
        "PostgreSQL hub: stores converge through a namespace",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubSyncTests {
        /// The cluster with the hub schema in place.
        static func hub() throws -> PostgresCluster {
            let cluster = try PostgresCluster.shared()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            return cluster
        }

        @Test("a push whose version lost to the hub's takes a number no row keeps, and leaves nobody behind")
        func lostPushLeavesNobodyBehind() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("gap")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let hub = try HubNamespace(
                connection: PostgresConnection(conninfo: url), namespace: nil, listens: false)
            let (x, y) = (ReplicaID.random(), ReplicaID.random())
            func entry(_ key: String, at milliseconds: UInt64, by replica: ReplicaID) -> SettingEntry {
                SettingEntry(
                    key: key, value: .integer(Int64(milliseconds)),
                    version: SettingVersion(
                        timestamp: HybridTimestamp(milliseconds: milliseconds, counter: 0), replica: replica),
                    sequence: 1)
            }
            try hub.push([entry("k", at: 2_000_000_000_000, by: x)], from: x, through: 1)
            try hub.push([entry("k", at: 1_000_000_000_000, by: y)], from: y, through: 1)
            #expect(try hub.lastSequence() == 2)
            let whole = try hub.pull(after: 0, for: .random(), limits: .desktop)
            #expect(whole.entries.count == 1)
            #expect(whole.through == 2, "a batch that holds every row after the cursor reaches the counter")
            try hub.push(
                [entry("a", at: 3_000_000_000_000, by: x), entry("b", at: 3_000_000_000_000, by: x)], from: x,
                through: 2)
            let truncated = try hub.pull(after: 2, for: .random(), limits: .desktop, limit: 1)
            #expect(truncated.through == 3, "a batch cut short stops at its last row")

            let settings = Settings(inMemoryWith: .init())
            let link = try settings.sync(withHub: HubConfiguration(url: url))
            defer { link.stop() }
            try await waitUntil {
                settings.value(forKey: "b") != nil && link.status.isConnected && link.status.pendingDown == 0
            }
            #expect(settings.value(forKey: "k") == .integer(2_000_000_000_000))
        }

        @Test(
            "a pull reads a window of hub numbers: a gap costs short batches, rows past the counter still come, nothing is skipped"
        )
        func windowedPull() throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("window")
            let hub = try HubNamespace(
                connection: PostgresConnection(
                    conninfo: cluster.conninfo(user: role.name, password: role.password)),
                namespace: nil, listens: false)
            let writer = ReplicaID.random()
            let stamp = HybridTimestamp(milliseconds: 1_000_000_000_000, counter: 0)
            let entries = (0..<250).map { index in
                SettingEntry(
                    key: "k\(index)", value: .integer(Int64(index)),
                    version: SettingVersion(timestamp: stamp, replica: writer), sequence: Int64(index + 1))
            }
            try hub.push(entries, from: writer, through: 250)
            // A gap of 5,000 numbers no row holds, a row inside it, and one numbered past the
            // counter by hand.
            let replica = "'\\x" + writer.bytes.map { String(format: "%02x", $0) }.joined() + "'::bytea"
            try cluster.psql(
                """
                UPDATE settingsd.namespaces SET last_seq = 5250 WHERE namespace = '\(role.name)';
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by) VALUES
                    ('\(role.name)', 'in.gap', NULL, 1, \(replica), 4000, \(replica)),
                    ('\(role.name)', 'past.counter', NULL, 1, \(replica), 9000, \(replica));
                """)
            var cursor: Int64 = 0
            var keys: [String] = []
            var pulls = 0
            while true {
                let batch = try hub.pull(after: cursor, for: .random(), limits: .desktop, limit: 100)
                pulls += 1
                #expect(batch.through > cursor, "pull \(pulls) from \(cursor) made no progress")
                keys += batch.entries.map(\.key)
                cursor = batch.through
                if batch.complete || pulls > 100 { break }
            }
            #expect(keys == entries.map(\.key) + ["in.gap", "past.counter"])
            #expect(cursor == 9000)
            // 250 rows in batches of 100, then windows of 200 numbers across the gap.
            #expect(pulls == 3 + 25, "\(pulls) pulls")
        }

        @Test("two embedded stores on one namespace converge: sets, deletes, concurrent writes")
        func embeddedStoresConverge() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("alice")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let hubA = try a.sync(withHub: HubConfiguration(url: url))
            let hubB = try b.sync(withHub: HubConfiguration(url: url))
            defer {
                hubA.stop()
                hubB.stop()
            }
            try a.set("dark", forKey: "ui.theme")
            try await waitUntil { b.value(forKey: "ui.theme") == "dark" }
            try b.removeValue(forKey: "ui.theme")
            try await waitUntil { a.value(forKey: "ui.theme") == nil }
            try a.set("from a", forKey: "k")
            try b.set("from b", forKey: "k")
            try await waitForConvergence([a, b])
            #expect(a.value(forKey: "k") == b.value(forKey: "k"))
            #expect(hubA.status.isConnected)
            #expect(hubA.status.namespace == role.name)
            #expect(hubA.status.mode == "listen")
            #expect(!hubA.status.address.contains(role.password))
        }
    }
}
