import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension HubReliability {
    @Suite(
        "PostgreSQL hub: batches that machines at one cursor share",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubSharedBatchTests {
        /// Everything a link reads of a batch, in one comparable line.
        static func summary(_ batch: PulledBatch) -> String {
            let entries = batch.entries.map {
                "\($0.key)=\(String(describing: $0.value))@\($0.version)#\($0.sequence)"
            }
            let mine = batch.mine.map { "\($0.key)@\($0.version)" }
            return
                "entries \(entries) mine \(mine) through \(batch.through) unreadable \(batch.unreadable) complete \(batch.complete) counter \(String(describing: batch.counter))"
        }

        /// A namespace of `role` on a fresh hub database at this build's schema, as a link opens it.
        static func namespace(_ cluster: PostgresCluster, _ role: (name: String, password: String)) throws
            -> (admin: PostgresConnection, hub: HubNamespace)
        {
            let hub = try HubPullTests.hub(cluster, role: role)
            return (hub.admin, try HubNamespace(connection: hub.member, namespace: role.name, listens: false))
        }

        static func entry(_ key: String, _ value: SettingValue, by replica: ReplicaID, at sequence: Int64)
            -> SettingEntry
        {
            SettingEntry(
                key: key, value: value,
                version: SettingVersion(
                    timestamp: HybridTimestamp(
                        milliseconds: 1_800_000_000_000 + UInt64(sequence), counter: 0),
                    replica: replica),
                sequence: sequence)
        }

        static func keptCounters(_ admin: PostgresConnection) throws -> [Int64] {
            let rows = try admin.execute("SELECT DISTINCT last_seq FROM settingsd.batches ORDER BY 1")
            return (0..<rows.count).map { rows.int64($0, 0) }
        }

        /// What a link ends up with pulling from `cursor` until a batch is complete: every
        /// batch's rows in hub order, the cursor it ends at and the last counter.
        static func drain(
            _ hub: HubNamespace, from cursor: Int64, for puller: ReplicaID, limits: SettingsLimits,
            limit: Int,
            budget: Int
        ) throws -> String {
            var cursor = cursor
            var batches: [PulledBatch] = []
            while batches.count < 1_000 {
                let batch = try hub.pull(
                    after: cursor, for: puller, limits: limits, limit: limit, byteBudget: budget)
                batches.append(batch)
                guard !batch.complete, batch.through > cursor else { break }
                cursor = batch.through
            }
            var all = PulledBatch(through: batches.last?.through ?? cursor, counter: batches.last?.counter)
            all.entries = batches.flatMap(\.entries)
            all.mine = batches.flatMap(\.mine)
            all.unreadable = batches.reduce(0) { $0 + $1.unreadable }
            all.complete = batches.last?.complete ?? false
            return summary(all)
        }

        @Test("a kept batch serves every puller at its cursor until the counter moves, then gives way")
        func keptBatchGivesWayWhenTheCounterMoves() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("kept")
            let (admin, hub) = try Self.namespace(cluster, role)
            let (writer, reader) = (ReplicaID.random(), ReplicaID.random())
            let first = try #require(
                try hub.push([Self.entry("kept.a", .integer(1), by: writer, at: 1)], from: writer, through: 1)
            )
            let pulled = try hub.pull(after: 0, for: reader, limits: .desktop)
            #expect(pulled.entries.map(\.key) == ["kept.a"])
            #expect(pulled.complete)
            #expect(try Self.keptCounters(admin) == [first.upperBound])
            // The writer's own row comes to it as its own, from the same kept batch.
            let own = try hub.pull(after: 0, for: writer, limits: .desktop)
            #expect(own.entries.isEmpty)
            #expect(own.mine.map(\.key) == ["kept.a"])

            // Served as kept: damaged by hand, it is refused with where it broke, and no row of it
            // is taken; the next push retires it.
            try admin.execute("UPDATE settingsd.batches SET payload = '\\x0102'::bytea")
            #expect {
                _ = try hub.pull(after: 0, for: reader, limits: .desktop)
            } throws: { error in
                (error as? SettingsError)?.message.contains("is malformed at byte 0") == true
            }

            // A push moves the counter: the next batch packed retires those before it.
            let second = try #require(
                try hub.push([Self.entry("kept.b", .integer(2), by: writer, at: 2)], from: writer, through: 2)
            )
            let after = try hub.pull(after: 0, for: reader, limits: .desktop)
            #expect(after.entries.map(\.key) == ["kept.a", "kept.b"])
            #expect(try Self.keptCounters(admin) == [second.upperBound])
        }

        @Test(
            "a pull's cleanup of older batches waits for no session that holds them (schema 12: two such cleanups deadlocked)"
        )
        func cleanupSkipsBatchesAnotherSessionHolds() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("skip")
            let (admin, member) = try HubPullTests.hub(cluster, role: role)
            let hub = try HubNamespace(connection: member, namespace: role.name, listens: false)
            let (writer, reader) = (ReplicaID.random(), ReplicaID.random())
            var last: Int64 = 0
            func push(_ key: String) throws {
                last += 1
                let pushed = try hub.push(
                    [Self.entry(key, .integer(last), by: writer, at: last)], from: writer, through: last)
                #expect(pushed != nil)
            }
            try push("skip.a")
            _ = try hub.pull(after: 0, for: reader, limits: .desktop)
            let first = try Self.keptCounters(admin)
            try push("skip.b")

            // Another session holds the kept batch's rows, as a pull deleting them does.
            let database = try admin.execute("SELECT current_database()::text").text(0, 0)
            let holder = try PostgresConnection(conninfo: cluster.conninfo(database: database))
            try holder.execute("BEGIN")
            try holder.execute("SELECT 1 FROM settingsd.batches FOR UPDATE")
            try member.execute("SET statement_timeout = 5000")
            let started = Date()
            let pulled = try hub.pull(after: 0, for: reader, limits: .desktop)
            #expect(Date().timeIntervalSince(started) < 4, "the pull waited for the held rows")
            #expect(pulled.entries.map(\.key) == ["skip.a", "skip.b"])
            let kept = try Self.keptCounters(admin)
            #expect(kept == first + [2], "the held batch is left for later")
            try holder.execute("ROLLBACK")

            // The next batch packed deletes what was left.
            try push("skip.c")
            _ = try hub.pull(after: 0, for: reader, limits: .desktop)
            let left = try Self.keptCounters(admin)
            #expect(left == [3])
        }

        @Test("a window that ends before the counter (an initial sync) is packed for its puller and not kept")
        func windowsBehindTheCounterAreNotKept() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("behind")
            let (admin, hub) = try Self.namespace(cluster, role)
            let writer = ReplicaID.random()
            let entries = (1...50).map {
                Self.entry("behind.\($0)", .integer(Int64($0)), by: writer, at: Int64($0))
            }
            let numbers = try #require(try hub.push(entries, from: writer, through: 50))
            var cursor: Int64 = 0
            var keys: [String] = []
            while true {
                let batch = try hub.pull(after: cursor, for: .random(), limits: .desktop, limit: 10)
                #expect(batch.counter == numbers.upperBound)
                keys += batch.entries.map(\.key)
                // Its window of 20 numbers reached the counter, or it was kept by none.
                let reached = cursor + 20 >= numbers.upperBound
                #expect(
                    try Self.keptCounters(admin) == (reached ? [numbers.upperBound] : []), "after \(cursor)")
                cursor = batch.through
                if batch.complete { break }
            }
            #expect(keys == entries.map(\.key))
            #expect(try Self.keptCounters(admin) == [numbers.upperBound])
        }

        @Test("a hand edit of the entries or the counter forgets every kept batch")
        func handEditsForgetKeptBatches() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("edit")
            let (admin, hub) = try Self.namespace(cluster, role)
            let (writer, reader) = (ReplicaID.random(), ReplicaID.random())
            try hub.push(
                [Self.entry("edit.a", .string("before"), by: writer, at: 1)], from: writer, through: 1)
            #expect(
                try hub.pull(after: 0, for: reader, limits: .desktop).entries.first?.value
                    == .string("before"))
            #expect(try Self.keptCounters(admin).count == 1)

            try admin.execute(
                "UPDATE settingsd.entries SET value = $1 WHERE key = 'edit.a'",
                [.bytes(SettingValue.string("by hand").encoded())])
            #expect(try Self.keptCounters(admin).isEmpty)
            #expect(
                try hub.pull(after: 0, for: reader, limits: .desktop).entries.first?.value
                    == .string("by hand"))

            #expect(try Self.keptCounters(admin).count == 1)
            try admin.execute("UPDATE settingsd.namespaces SET last_seq = last_seq")
            #expect(try Self.keptCounters(admin).isEmpty)
        }

        @Test("kept batches are the hub's alone: a member can neither read them nor pull another namespace's")
        func keptBatchesAreNotReadable() throws {
            let cluster = try HubSyncTests.hub()
            let (owner, stranger) = (try cluster.makeRole("owns"), try cluster.makeRole("other"))
            let (_, hub) = try Self.namespace(cluster, owner)
            let writer = ReplicaID.random()
            try hub.push([Self.entry("own.a", .integer(1), by: writer, at: 1)], from: writer, through: 1)
            _ = try hub.pull(after: 0, for: .random(), limits: .desktop)
            let database = try hub.connection.execute("SELECT current_database()::text").text(0, 0)
            let outsider = try PostgresConnection(
                conninfo: cluster.conninfo(
                    user: stranger.name, password: stranger.password, database: database))
            #expect {
                try outsider.execute("SELECT count(*) FROM settingsd.batches")
            } throws: { error in
                (error as? SettingsError)?.message.contains("permission denied") == true
            }
            #expect {
                try outsider.execute(
                    "SELECT * FROM settingsd.pull_batch($1, NULL, 0, 1000, 1024, 4096, 8388608, 2000)",
                    [.text(owner.name)])
            } throws: { error in
                (error as? SettingsError)?.message.contains("may not use hub namespace") == true
            }
        }
    }
}
