import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension HubReliability {
    @Suite(
        "PostgreSQL hub: the pull against its model, its counter, and which schemas serve this build",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubPullTests {
        /// A hub in a database of its own, for `role` (its namespace is the role).
        static func hub(_ cluster: PostgresCluster, role: (name: String, password: String)) throws -> (
            admin: PostgresConnection, member: PostgresConnection
        ) {
            let database = try cluster.makeDatabase()
            let admin = try PostgresConnection(conninfo: cluster.conninfo(database: database))
            try HubSchema.migrate(admin)
            let member = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password, database: database))
            return (admin, member)
        }

        /// One row of the hub, as the model reads it.
        struct Row {
            let key: String
            let value: [UInt8]?
            let stamp: Int64
            let replica: [UInt8]
            let sequence: Int64
            let pusher: [UInt8]
        }

        /// Every row of `namespace` and its counter, read as the owner.
        static func rows(of namespace: String, _ admin: PostgresConnection) throws -> (
            rows: [Row], counter: Int64?
        ) {
            let read = try admin.execute(
                "SELECT key, value, hlc, replica, hub_seq, pushed_by FROM settingsd.entries WHERE namespace = $1",
                [.text(namespace)])
            let rows = (0..<read.count).map { row in
                Row(
                    key: read.text(row, 0), value: read.isNull(row, 1) ? nil : read.bytes(row, 1),
                    stamp: read.int64(row, 2), replica: read.bytes(row, 3), sequence: read.int64(row, 4),
                    pusher: read.bytes(row, 5))
            }
            let counter = try admin.execute(
                "SELECT last_seq FROM settingsd.namespaces WHERE namespace = $1", [.text(namespace)])
            return (rows, counter.count == 1 ? counter.int64(0, 0) : nil)
        }

        /// What a pull must bring, by the rules `settingsd.pull_batch` states: the rows after the
        /// cursor within its window (twice the limit, open-ended once it reaches the counter), at
        /// most `limit`, in hub order; all of them when their values fit the budget, otherwise
        /// the first and then those while the running sum of readable values' bytes fits; a key
        /// or value over the caps unreadable; the puller's own rows told by their pusher.
        static func model(
            _ rows: [Row], counter: Int64?, after cursor: Int64, for puller: ReplicaID,
            limits: SettingsLimits,
            limit: Int, budget: Int
        ) -> PulledBatch {
            guard let counter else { return PulledBatch(through: cursor, counter: nil) }
            let window = Int64(limit) * 2
            let upto = cursor + window < counter ? cursor + window : Int64.max
            let candidates = Array(
                rows.filter { $0.sequence > cursor && $0.sequence <= upto }.sorted {
                    $0.sequence < $1.sequence
                }
                .prefix(limit))
            let caps = HubNamespace.caps(for: limits)
            func oversize(_ row: Row) -> Bool {
                row.key.utf8.count > caps.keyBytes || (row.value?.count ?? 0) > caps.valueBytes
            }
            var kept = candidates
            if candidates.reduce(0, { $0 + ($1.value?.count ?? 0) }) > budget {
                var running = 0
                kept = []
                for (position, row) in candidates.enumerated() {
                    running += oversize(row) ? 0 : (row.value?.count ?? 0)
                    if position == 0 || running <= budget { kept.append(row) }
                }
            }
            var batch = PulledBatch(through: cursor, counter: Arrival.isPosition(counter) ? counter : nil)
            for row in kept {
                let version = ReplicaID(bytes: row.replica).map {
                    SettingVersion(
                        timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: row.stamp)), replica: $0)
                }
                batch.take(
                    sequence: row.sequence, isReadable: !oversize(row), version: version,
                    isMine: row.pusher == puller.bytes, key: { _ in row.key },
                    entry: { version, sequence in
                        guard let value = row.value else {
                            return SettingEntry(
                                key: row.key, value: nil, version: version, sequence: sequence)
                        }
                        return (try? value.withUnsafeBytes { try SettingValue(decoding: $0) }).map {
                            SettingEntry(key: row.key, value: $0, version: version, sequence: sequence)
                        }
                    })
            }
            batch.finish(
                after: cursor, window: window, limit: limit, returned: Int64(kept.count),
                candidates: Int64(candidates.count), counter: counter)
            return batch
        }

        @Test(
            "a pull, packed or kept, brings what the model says, whatever the rows, cursor, caps, budget and puller"
        )
        func pullMatchesTheModel() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("pull")
            let (admin, member) = try Self.hub(cluster, role: role)
            var generator = SeededGenerator(seed: SeededGenerator.seed)
            let (sql, sequence, replicas) = Self.randomRows(of: role.name, readable: true, using: &generator)
            try admin.executeScript(sql)
            let hub = try HubNamespace(connection: member, namespace: role.name, listens: false)
            let (rows, counter) = try Self.rows(of: role.name, admin)
            let limits = [
                SettingsLimits.desktop, SettingsLimits(maximumKeyBytes: 256, maximumValueBytes: 500),
            ]
            for trial in 0..<200 {
                let cursor =
                    trial < 5
                    ? [0, sequence, sequence + 2, -1, 1][trial]
                    : Int64.random(in: 0...sequence, using: &generator)
                let puller =
                    ReplicaID(bytes: replicas.randomElement(using: &generator) ?? replicas[0]) ?? .random()
                let limit = [1, 2, 10, 100, 1_000].randomElement(using: &generator) ?? 100
                let caps = limits.randomElement(using: &generator) ?? .desktop
                let budget = [0, 500, 5_000, 50_000, 8 << 20].randomElement(using: &generator) ?? 5_000
                let expected = HubSharedBatchTests.summary(
                    Self.model(
                        rows, counter: counter, after: cursor, for: puller, limits: caps, limit: limit,
                        budget: budget))
                // Packed the first time (and kept where its window reaches the counter), kept the second.
                for round in 0..<2 {
                    let batch = try hub.pull(
                        after: cursor, for: puller, limits: caps, limit: limit, byteBudget: budget)
                    #expect(
                        HubSharedBatchTests.summary(batch) == expected,
                        "trial \(trial): cursor \(cursor), limit \(limit), budget \(budget), round \(round)")
                }
            }
            #expect(
                try HubSharedBatchTests.keptCounters(admin) == [sequence + 2],
                "only batches at the counter are kept")

            // No counter row (deleted by hand): no rows.
            try admin.execute("DELETE FROM settingsd.namespaces WHERE namespace = $1", [.text(role.name)])
            let orphaned = try hub.pull(after: 0, for: .random(), limits: .desktop)
            #expect(orphaned.counter == nil && orphaned.entries.isEmpty && !orphaned.complete)
        }

        @Test("while others push, a pull never holds a row numbered past the counter it reports")
        func pullAgreesWithItsCounter() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("snap")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let puller = try HubNamespace(
                connection: PostgresConnection(conninfo: url), namespace: nil, listens: false)
            let stopped = Atomic<Bool>(false)
            let pushing = DispatchGroup()
            for writer in 0..<2 {
                pushing.enter()
                Thread.detachNewThread {
                    defer { pushing.leave() }
                    guard
                        let hub = try? HubNamespace(
                            connection: PostgresConnection(conninfo: url), namespace: nil, listens: false)
                    else { return }
                    let replica = ReplicaID.random()
                    var sequence: Int64 = 0
                    while !stopped.load(ordering: .relaxed) {
                        sequence += 1
                        let entry = SettingEntry(
                            key: "snap.\(writer).\(sequence)", value: .integer(sequence),
                            version: SettingVersion(
                                timestamp: HybridTimestamp(
                                    milliseconds: 1_800_000_000_000 + UInt64(sequence), counter: 0),
                                replica: replica),
                            sequence: sequence)
                        _ = try? hub.push([entry], from: replica, through: sequence)
                    }
                }
            }
            defer {
                stopped.store(true, ordering: .relaxed)
                pushing.wait()
            }
            var cursor: Int64 = 0
            var pastTheCounter = 0
            for _ in 0..<1_500 {
                let batch = try puller.pull(
                    after: max(0, cursor - 3), for: .random(), limits: .desktop, limit: 50)
                let counter = try #require(batch.counter)
                pastTheCounter += batch.entries.count { $0.sequence > counter }
                cursor = max(cursor, counter)
            }
            #expect(cursor > 100, "the writers pushed while the pulls ran")
            #expect(pastTheCounter == 0)
        }

        @Test(
            "a newer hub serves this build when it says so and is refused when not; a development build's hub is refused with how to replace it"
        )
        func compatibleSchemasServe() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("compat")
            let ahead = try Self.hub(cluster, role: role)
            try ahead.admin.execute(
                "UPDATE settingsd.meta SET value = $1 WHERE name = 'schema_version'",
                [.text(String(HubSchema.current + 1))])
            try HubSchema.check(ahead.member)
            try ahead.admin.execute(
                "UPDATE settingsd.meta SET value = $1 WHERE name = 'compatible_since'",
                [.text(String(HubSchema.current + 1))])
            #expect {
                try HubSchema.check(ahead.member)
            } throws: { error in
                (error as? SettingsError)?.message.contains("newer than this settingsd supports") == true
            }
            // A hub a development build made (schema 1 to 14): refused by links and by hub init.
            let old = try Self.hub(cluster, role: role)
            try old.admin.execute("UPDATE settingsd.meta SET value = '14' WHERE name = 'schema_version'")
            for connection in [old.member, old.admin] {
                #expect {
                    try HubSchema.check(connection)
                } throws: { error in
                    (error as? SettingsError)?.message.contains("DROP SCHEMA settingsd CASCADE") == true
                }
            }
            #expect {
                try HubSchema.migrate(old.admin)
            } throws: { error in
                (error as? SettingsError)?.message.contains("made by a development build") == true
            }
        }

        /// SQL inserting 300 rows into `namespace` with gaps in their numbers, tombstones, keys and
        /// values over the caps, values large enough for a budget to cut, and each of three
        /// replicas as the pusher; with the last number a row holds and the replicas. With
        /// `readable`, values are strings a store reads (one in 23 is not) and some rows were
        /// written by another replica than their pusher.
        static func randomRows(
            of namespace: String, readable: Bool = false, using generator: inout SeededGenerator
        )
            -> (sql: String, lastSequence: Int64, replicas: [[UInt8]])
        {
            let replicas = (0..<3).map { _ in ReplicaID.random().bytes }
            var sequence: Int64 = 0
            var values: [String] = []
            for index in 0..<300 {
                sequence += Int64.random(in: 1...3, using: &generator)
                let key =
                    index % 29 == 0 ? String(repeating: "k", count: 300) + "\(index)" : "pull.key.\(index)"
                let size = [0, 9, 9, 40, 700, 3_000].randomElement(using: &generator) ?? 9
                var bytes = [UInt8](repeating: 0xab, count: size)
                if readable, index % 23 != 0 {
                    bytes = SettingValue.string(String(repeating: "v", count: size)).encoded()
                }
                let value = index % 17 == 0 ? "NULL" : "'\\x\(Self.hex(bytes))'::bytea"
                let pusher = replicas.randomElement(using: &generator) ?? replicas[0]
                let writer = readable && index % 5 == 0 ? replicas[index % 3] : pusher
                values.append(
                    "('\(namespace)', '\(key)', \(value), \(index * 7), '\\x\(Self.hex(writer))'::bytea, \(sequence), '\\x\(Self.hex(pusher))'::bytea)"
                )
            }
            let sql = """
                INSERT INTO settingsd.namespaces (namespace, last_seq) VALUES ('\(namespace)', \(sequence + 2));
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by) VALUES
                \(values.joined(separator: ",\n"));
                """
            return (sql, sequence, replicas)
        }

        static func hex(_ bytes: [UInt8]) -> String {
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
    }
}
