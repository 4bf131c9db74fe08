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
        "Quiet checks: a polling link asks a quiet hub for its snapshot alone, and never takes a stale counter",
        .enabled(if: PostgresCluster.testsEnabled, "needs PostgreSQL (apt-get install postgresql)")
    )
    struct HubQuietCheckTests {
        /// A cluster of this suite's own: the other hub tests' transactions would keep the shared
        /// one's snapshot moving, and no poll would ever be a quiet check.
        static let cluster = Result { () throws -> PostgresCluster in
            let cluster = try PostgresCluster.makePrivate()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            return cluster
        }

        /// A namespace of its own on the private cluster, opened by its role, polling as through
        /// a pooler (simple queries) unless `prepared`.
        func namespace(_ prefix: String, prepared: Bool = false) throws -> (
            cluster: PostgresCluster, hub: HubNamespace, role: (name: String, password: String)
        ) {
            let cluster = try Self.cluster.get()
            let role = try cluster.makeRole(prefix)
            let connection = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password))
            connection.preparesStatements = prepared
            return (cluster, try HubNamespace(connection: connection, namespace: nil, listens: false), role)
        }

        /// One entry of `replica`'s, at hub-independent time `stamp`.
        func entry(_ key: String, _ stamp: UInt64, by replica: ReplicaID) -> SettingEntry {
            SettingEntry(
                key: key, value: .integer(Int64(stamp)),
                version: SettingVersion(
                    timestamp: HybridTimestamp(milliseconds: 1_700_000_000_000 + stamp, counter: 0),
                    replica: replica),
                sequence: Int64(stamp))
        }

        @Test(
            "on a quiet hub the third poll is a quiet check; another machine's push is seen by the next, which reads the counter too"
        )
        func quietHubIsCheckedQuietly() throws {
            let (_, hub, role) = try namespace("quiet")
            let other = try HubNamespace(
                connection: PostgresConnection(
                    conninfo: Self.cluster.get().conninfo(user: role.name, password: role.password)),
                namespace: nil, listens: false)
            var quiet = HubQuietCheck()
            let start = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(!start.checkedQuietly, "the first poll has no baseline")
            let second = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(!second.checkedQuietly, "one look says nothing of the interval after it")
            let statements = hub.connection.statementCount
            for _ in 0..<3 {
                let polled = try hub.poll(readingLoad: false, quiet: &quiet)
                #expect(polled.checkedQuietly && polled.counter == start.counter)
            }
            #expect(hub.connection.statementCount - statements == 3, "a quiet check is one statement")
            #expect(quiet.callable != nil, "at hub schema 13 a fast-path call (`HubQuietCallTests`)")
            let writer = ReplicaID.random()
            try other.push([entry("k", 1, by: writer)], from: writer, through: 1)
            let moved = try hub.poll(readingLoad: true, quiet: &quiet)
            #expect(try !moved.checkedQuietly && moved.counter == other.lastSequence())
            #expect(moved.counter != start.counter && moved.transactions != nil)
            #expect(hub.connection.statementCount - statements == 5, "the snapshot moved: the counter too")
            let again = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(!again.checkedQuietly && again.counter == moved.counter, "two must agree again")
            let quietAgain = try hub.poll(readingLoad: true, quiet: &quiet)
            #expect(quietAgain.checkedQuietly && quietAgain.counter == moved.counter)
            #expect(quietAgain.transactions != nil)
        }

        @Test(
            "a quiet check costs the server no call of the counter"
        )
        func quietCheckSkipsTheCounter() throws {
            let (cluster, _, role) = try namespace("skips")
            try cluster.psql("ALTER ROLE \(role.name) SET track_functions = 'pl'")
            // A new connection, which takes the role's setting at login.
            let connection = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password))
            connection.preparesStatements = false
            let hub = try HubNamespace(connection: connection, namespace: nil, listens: false)
            func counterCalls() throws -> Int64 {
                // Statistics reach the shared view when the backend next goes idle.
                _ = try connection.query("SELECT pg_catalog.pg_stat_force_next_flush()")
                let rows = try connection.query(
                    "SELECT coalesce(sum(calls), 0)::bigint FROM pg_catalog.pg_stat_user_functions"
                        + " WHERE funcid = 'settingsd.counter(name)'::regprocedure")
                return Int64(rows.text(0, 0)) ?? -1
            }
            var quiet = HubQuietCheck()
            let before = try counterCalls()
            _ = try hub.poll(readingLoad: false, quiet: &quiet)
            _ = try hub.poll(readingLoad: false, quiet: &quiet)
            let baseline = try counterCalls()
            #expect(baseline == before + 2, "polls without a baseline read the counter")
            for _ in 0..<4 {
                let polled = try hub.poll(readingLoad: false, quiet: &quiet)
                #expect(polled.checkedQuietly)
            }
            #expect(try counterCalls() == baseline, "quiet checks leave the counter alone")
        }

        @Test(
            "a transaction that began before the baseline and commits after it is seen, though the first unfinished stays"
        )
        func transactionBegunBeforeTheBaseline() throws {
            let (cluster, hub, role) = try namespace("running")
            let admin = try PostgresConnection(conninfo: cluster.conninfo())
            let other = try PostgresConnection(conninfo: cluster.conninfo())
            // A hand edit left open, then another transaction that commits: the edit's number is
            // now below the first unfinished, in the list of running ones.
            _ = try admin.execute("BEGIN")
            _ = try admin.execute(
                "UPDATE settingsd.namespaces SET last_seq = last_seq + 5 WHERE namespace = $1",
                [.text(role.name)])
            _ = try other.execute("SELECT pg_catalog.txid_current()")
            var quiet = HubQuietCheck()
            let before = try hub.poll(readingLoad: false, quiet: &quiet)
            _ = try hub.poll(readingLoad: false, quiet: &quiet)
            let during = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(during.checkedQuietly, "quiet while the edit runs")
            _ = try admin.execute("COMMIT")
            let after = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(!after.checkedQuietly, "the edit's commit left the running list: no quiet check vouches")
            #expect(after.counter == before.counter + 5)
        }

        /// One step of `neverAStaleCounter`.
        private enum Step: CaseIterable {
            case push, pushElsewhere, begin, commit, rollBack, numberOnly, poll
        }

        @Test(
            "over random pushes, edits left open, commits, rollbacks and other namespaces, a poll's counter is never stale"
        )
        func neverAStaleCounter() throws {
            let cluster = try Self.cluster.get()
            let checker = try PostgresConnection(conninfo: cluster.conninfo())
            let editor = try PostgresConnection(conninfo: cluster.conninfo())
            var generator = SystemRandomNumberGenerator()
            for prepared in [false, true] {
                let (_, hub, role) = try namespace("model", prepared: prepared)
                let (_, elsewhere, _) = try namespace("elsewhere")
                let pusher = try HubNamespace(
                    connection: PostgresConnection(
                        conninfo: cluster.conninfo(user: role.name, password: role.password)),
                    namespace: nil, listens: false)
                let writer = ReplicaID.random()
                var (pushed, pushedElsewhere, isEditing) = (Int64(0), Int64(0), false)
                var (confirmed, missed) = (0, 0)
                var quiet = HubQuietCheck()
                func truth() throws -> Int64 {
                    try checker.execute(
                        "SELECT last_seq FROM settingsd.namespaces WHERE namespace = $1", [.text(role.name)]
                    ).int64(0, 0)
                }
                for _ in 0..<300 {
                    // Polls are half the steps, so that quiet spells are long enough for checks.
                    let step =
                        Bool.random(using: &generator)
                        ? .poll : Step.allCases.randomElement(using: &generator)!
                    switch step {
                    case .push where !isEditing:  // it would wait for the edit's lock on the counter
                        pushed += 1
                        try pusher.push(
                            [entry("k\(pushed % 7)", UInt64(pushed), by: writer)], from: writer,
                            through: pushed)
                    case .pushElsewhere:
                        pushedElsewhere += 1
                        try elsewhere.push(
                            [entry("e", UInt64(pushedElsewhere), by: writer)], from: writer,
                            through: pushedElsewhere)
                    case .begin where !isEditing:
                        _ = try editor.execute("BEGIN")
                        _ = try editor.execute(
                            "UPDATE settingsd.namespaces SET last_seq = last_seq + 1 WHERE namespace = $1",
                            [.text(role.name)])
                        isEditing = true
                    case .commit where isEditing, .rollBack where isEditing:
                        _ = try editor.execute(step == .commit ? "COMMIT" : "ROLLBACK")
                        isEditing = false
                    case .numberOnly:
                        _ = try checker.execute("SELECT pg_catalog.txid_current()")
                    case .poll:
                        let guarded = quiet.baseline != nil
                        let polled = try hub.poll(readingLoad: Bool.random(using: &generator), quiet: &quiet)
                        #expect(polled.counter == (try truth()), "prepared: \(prepared)")
                        if polled.checkedQuietly {
                            confirmed += 1
                        } else if guarded {
                            missed += 1
                        }
                    default:
                        break  // a push during an edit, an edit that cannot begin or end now
                    }
                }
                if isEditing { _ = try editor.execute("ROLLBACK") }
                #expect(
                    confirmed > 10 && missed > 5,
                    "prepared: \(prepared); confirmed \(confirmed), missed \(missed)")
            }
        }

        @Test(
            "a polling link on a quiet hub answers its polls with quiet checks, and still takes the next change at once"
        )
        func linkChecksQuietly() async throws {
            let cluster = try Self.cluster.get()
            let role = try cluster.makeRole("link")
            let url =
                cluster.conninfo(user: role.name, password: role.password)
                + " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.2"
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let hubA = try a.sync(withHub: HubConfiguration(url: url))
            defer { hubA.stop() }
            let hubB = try b.sync(withHub: HubConfiguration(url: url))
            defer { hubB.stop() }
            try a.set("first", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "first" }
            try await waitUntil(timeout: 60) { hubB.status.quietChecks >= 5 }
            #expect(hubB.status.mode == "poll" && hubB.status.lastError == nil)
            try a.set("second", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "second" }
        }

        @Test(
            "a polling link spares its routine comparisons while the hub is quiet, and still finds and repairs a row deleted by hand"
        )
        func quietLinkSparesComparisons() async throws {
            let cluster = try Self.cluster.get()
            let role = try cluster.makeRole("spare")
            var configuration = HubConfiguration(
                url: cluster.conninfo(user: role.name, password: role.password)
                    + " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.2")
            configuration.comparisonInterval = 0.5
            let settings = Settings(inMemoryWith: .init())
            let hub = try settings.sync(withHub: configuration)
            defer { hub.stop() }
            try settings.set("kept", forKey: "k")
            try await waitUntil(timeout: 60) { hub.status.comparisonsSpared >= 2 }
            #expect(hub.status.agreement == "agreed")
            let compared = hub.status.comparisons
            let admin = try PostgresConnection(conninfo: cluster.conninfo())
            func rows() throws -> String {
                try admin.query("SELECT count(*) FROM settingsd.entries WHERE namespace = '\(role.name)'")
                    .text(0, 0)
            }
            #expect(try rows() == "1")
            try cluster.psql("DELETE FROM settingsd.entries WHERE namespace = '\(role.name)'")
            #expect(try rows() == "0")
            try await waitUntil(timeout: 60) { try rows() == "1" }
            #expect(hub.status.comparisons > compared, "the edit moved the hub's snapshot: a comparison ran")
            #expect(hub.status.repairedKeys == 1 && hub.status.lastError == nil)
        }

        @Test(
            "a role refused the snapshot's functions polls the counter alone; refused the statistics too, it says which"
        )
        func refusedSnapshotFunctions() throws {
            let cluster = try PostgresCluster.shared()
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database))
            try cluster.psql(
                "REVOKE EXECUTE ON FUNCTION pg_catalog.txid_current_snapshot() FROM PUBLIC",
                database: database)
            let role = try cluster.makeRole("nosnap")
            let hub = try HubNamespace(
                connection: PostgresConnection(
                    conninfo: cluster.conninfo(user: role.name, password: role.password, database: database)),
                namespace: nil, listens: false)
            var quiet = HubQuietCheck()
            for _ in 0..<4 {
                let polled = try hub.poll(readingLoad: true, quiet: &quiet)
                #expect(try !polled.checkedQuietly && polled.counter == hub.lastSequence())
                #expect(polled.transactions != nil)
            }
            #expect(!quiet.isAvailable)

            try cluster.psql(
                "REVOKE EXECUTE ON FUNCTION pg_catalog.pg_stat_get_db_xact_commit(oid) FROM PUBLIC",
                database: database)
            var refused = HubQuietCheck()
            #expect(throws: SettingsError.self, "the load's refusal reaches the link, which stops reading it")
            {
                _ = try hub.poll(readingLoad: true, quiet: &refused)
            }
            #expect(refused.isAvailable, "not blamed on the snapshot")
            let counted = try hub.poll(readingLoad: false, quiet: &refused)
            #expect(counted.counter == (try hub.lastSequence()))
            #expect(!refused.isAvailable)
        }
    }
}
