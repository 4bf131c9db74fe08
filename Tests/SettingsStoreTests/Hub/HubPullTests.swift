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
        "PostgreSQL hub: the pull function across schema versions",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubPullTests {
        /// One hub database migrated through `version`, for `role` (its namespace is the role).
        static func hub(
            _ cluster: PostgresCluster, through version: Int64, role: (name: String, password: String)
        ) throws -> (admin: PostgresConnection, member: PostgresConnection) {
            let database = try cluster.makeDatabase()
            let admin = try PostgresConnection(conninfo: cluster.conninfo(database: database))
            try HubSchema.migrate(admin, through: version)
            let member = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password, database: database))
            return (admin, member)
        }

        /// Every column of every row `settingsd.pull` answers, as text, in order.
        private static func pull(_ connection: PostgresConnection, _ arguments: [PostgresValue]) throws
            -> [[String]]
        {
            let rows = try connection.execute(
                "SELECT * FROM settingsd.pull($1, $2, $3, $4, $5, $6, $7, $8)", arguments)
            return (0..<rows.count).map { row in
                (0..<9).map { column in
                    guard !rows.isNull(row, column) else { return "NULL" }
                    switch column {
                    case 0: return rows.text(row, column)
                    case 1, 3:
                        // Short enough to read in a failure: the length and a hash of the bytes.
                        let bytes = rows.bytes(row, column)
                        return
                            "\(bytes.count) bytes #\(bytes.reduce(UInt64(5381)) { $0 &* 33 &+ UInt64($1) })"

                    default: return String(rows.int64(row, column))
                    }
                }
            }
        }

        /// The rows as every build since schema 8 reads them (`HubNamespace.pull`): a NULL flag is
        /// 0, the counter is the first row's and the candidate count the last row's.
        private static func asRead(_ rows: [[String]]) -> [[String]] {
            rows.enumerated().map { index, row in
                var read = row
                for flag in [5, 6] where read[flag] == "NULL" { read[flag] = "0" }
                if index > 0 { read[7] = "-" }
                if index < rows.count - 1 { read[8] = "-" }
                return read
            }
        }

        @Test(
            "this build's pull answers what schema 8's did, as links read it, whatever the rows, caps and budget"
        )
        func pullMatchesTheSchemaBefore() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("pull")
            let before = try Self.hub(cluster, through: 8, role: role)
            let after = try Self.hub(cluster, through: HubSchema.current, role: role)
            var generator = SeededGenerator(seed: SeededGenerator.seed)
            let (rows, sequence, replicas) = Self.randomRows(of: role.name, using: &generator)
            for hub in [before, after] { try hub.admin.executeScript(rows) }

            for trial in 0..<200 {
                let arguments: [PostgresValue] = [
                    .text(role.name),
                    .int64(
                        trial < 5
                            ? [0, sequence, sequence + 2, -1, 1][trial]
                            : Int64.random(in: 0...sequence, using: &generator)),
                    .int64([1, 2, 10, 100, 1_000].randomElement(using: &generator) ?? 100),
                    .bytes(replicas.randomElement(using: &generator) ?? replicas[0]),
                    .int64([16, 256].randomElement(using: &generator) ?? 256),
                    .int64([1_000, 10_000].randomElement(using: &generator) ?? 10_000),
                    .int64([0, 500, 5_000, 50_000, 8 << 20].randomElement(using: &generator) ?? 5_000),
                    .int64([1, 20, 200, 2_000].randomElement(using: &generator) ?? 200),
                ]
                let expected = try Self.asRead(Self.pull(before.member, arguments))
                let answered = try Self.asRead(Self.pull(after.member, arguments))
                let firstDifference = zip(answered, expected).enumerated().first {
                    $0.element.0 != $0.element.1
                }?.offset
                #expect(
                    answered == expected,
                    "trial \(trial): \(answered.count) rows against \(expected.count), first different row \(firstDifference.map(String.init) ?? "none"); arguments \(arguments)"
                )
            }

            // No counter row (deleted by hand): no rows, as before.
            for hub in [before, after] {
                try hub.admin.execute(
                    "DELETE FROM settingsd.namespaces WHERE namespace = $1", [.text(role.name)])
            }
            let orphaned: [PostgresValue] = [
                .text(role.name), .int64(0), .int64(100), .bytes(replicas[0]), .int64(256), .int64(10_000),
                .int64(8 << 20), .int64(200),
            ]
            #expect(try Self.pull(after.member, orphaned) == Self.pull(before.member, orphaned))
            #expect(try Self.pull(after.member, orphaned).isEmpty)
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

        @Test("a hub one step behind, or ahead with a step that kept its functions' shape, serves this build")
        func compatibleSchemasServe() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("compat")
            let behind = try Self.hub(cluster, through: HubSchema.current - 1, role: role)
            #expect(try HubSchema.version(behind.admin) == HubSchema.current - 1)
            try HubSchema.check(behind.member)
            try HubSchema.check(behind.admin)

            // A link syncs through it, both ways.
            let url = cluster.conninfo(
                user: role.name, password: role.password,
                database: try behind.admin.execute("SELECT current_database()::text").text(0, 0))
            let (first, second) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let links = [
                try first.sync(withHub: HubConfiguration(url: url)),
                try second.sync(withHub: HubConfiguration(url: url)),
            ]
            defer { links.forEach { $0.stop() } }
            try first.set("from an older hub", forKey: "compat.key")
            try await waitUntil { second.value(forKey: "compat.key") == "from an older hub" }
            // `hub status` tells the hub's own version, not this build's.
            #expect(try HubAdministration.report(url: url).schemaVersion == HubSchema.current - 1)

            // A newer hub serves this build when it says so, and is refused when it does not.
            let ahead = try Self.hub(cluster, through: HubSchema.current, role: role)
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
            // So is a hub older than the oldest this build's functions work with.
            let old = try Self.hub(cluster, through: 7, role: role)
            #expect {
                try HubSchema.check(old.member)
            } throws: { error in
                (error as? SettingsError)?.message.contains("older than this settingsd's") == true
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
