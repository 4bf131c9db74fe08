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
    /// Every row and number from the hub is hostile input: what a tenant (or a broken hub) writes
    /// with plain SQL can make a member refuse it and log why, never crash, wedge or poison it.
    /// The rows are written here as the cluster's superuser, as a compromised hub would.
    @Suite(
        "PostgreSQL hub: forged rows and counters are refused at the arrival gate",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubHostileRowsTests {
        let directory = TemporaryDirectory()

        /// A daemon on its own namespace, with one change already on the hub; when `polls`, its link
        /// polls as through a pooler (statements unprepared, the counter read as text).
        private func member(polls: Bool = false) throws -> (
            daemon: DaemonProcess, cluster: PostgresCluster, namespace: String
        ) {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("victim")
            let url =
                cluster.conninfo(user: role.name, password: role.password)
                + (polls ? " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.5" : "")
            let daemon = try DaemonProcess(
                directory, database: directory.file("\(role.name).sqlite"), arguments: ["--hub", url])
            #expect(daemon.cli("set", "before", "1").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            return (daemon, cluster, role.name)
        }

        /// `bytes` as a PostgreSQL bytea literal.
        private func bytea(_ bytes: [UInt8]) -> String {
            "'\\x"
                + bytes.map {
                    String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
                }
                .joined() + "'::bytea"
        }

        @Test(
            "a counter set to -2^63 is refused with a reason, the daemon lives and recovers once it is repaired",
            arguments: [false, true])
        func forgedCounter(polls: Bool) async throws {
            let (daemon, cluster, namespace) = try member(polls: polls)
            try cluster.psql(
                "UPDATE settingsd.namespaces SET last_seq = -9223372036854775808 WHERE namespace = '\(namespace)'"
            )
            #expect(daemon.cli("set", "during", "2").status == 0)
            try await waitUntil(timeout: 60) {
                try daemon.status().hubs.first?.lastError?.contains("out of range") == true
            }
            #expect(daemon.cli("get", "during").output == "2\n")
            try cluster.psql(
                """
                UPDATE settingsd.namespaces SET last_seq = (SELECT max(hub_seq) FROM settingsd.entries
                    WHERE namespace = '\(namespace)') WHERE namespace = '\(namespace)'
                """)
            #expect(daemon.cli("set", "after", "3").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test(
            "a polled counter that is not a number is refused with a reason, and the link recovers once it is"
        )
        func counterInWords() async throws {
            // A database of its own: the function is replaced hub-wide, as a compromised hub would.
            let cluster = try HubSyncTests.hub()
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database))
            let role = try cluster.makeRole("words")
            try cluster.psql("GRANT settingsd_user TO \(role.name)", database: database)
            let url =
                cluster.conninfo(user: role.name, password: role.password, database: database)
                + " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.5"
            let daemon = try DaemonProcess(
                directory, database: directory.file("words.sqlite"), arguments: ["--hub", url])
            #expect(daemon.cli("set", "before", "1").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            let admin = try PostgresConnection(conninfo: cluster.conninfo(database: database))
            let original = try admin.execute(
                "SELECT pg_get_functiondef('settingsd.counter(name)'::regprocedure)"
            ).text(0, 0)
            let grants = "GRANT EXECUTE ON FUNCTION settingsd.counter(name) TO settingsd_user"
            try cluster.psql(
                """
                DROP FUNCTION settingsd.counter(name);
                CREATE FUNCTION settingsd.counter(namespace name) RETURNS text LANGUAGE sql
                    AS $$ SELECT 'a great many' $$;
                \(grants);
                """, database: database)
            #expect(daemon.cli("set", "during", "2").status == 0)
            try await waitUntil(timeout: 60) {
                try daemon.status().hubs.first?.lastError?.contains("is not a number") == true
            }
            #expect(daemon.cli("get", "during").output == "2\n")
            try cluster.psql(
                "DROP FUNCTION settingsd.counter(name); \(original); \(grants)", database: database)
            #expect(daemon.cli("set", "after", "3").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test(
            "forged rows (hub_seq 2^63-1, hlc -1, a NaN date, bad and huge keys) are never stored or computed with"
        )
        func forgedRows() async throws {
            let (daemon, cluster, namespace) = try member()
            let replica = bytea(Array(ReplicaID.random().bytes))
            let nanDate = bytea(SettingValue.date(Date(timeIntervalSinceReferenceDate: .nan)).encoded())
            let text = bytea(SettingValue.string("forged").encoded())
            try cluster.psql(
                """
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by) VALUES
                    ('\(namespace)', 'far.ahead', \(text), 1, \(replica), 9223372036854775807, \(replica)),
                    ('\(namespace)', 'clock.forged', \(text), -1, \(replica), 1000001, \(replica)),
                    ('\(namespace)', 'date.nan', \(nanDate), 1, \(replica), 1000002, \(replica)),
                    ('\(namespace)', '', NULL, 1, \(replica), 1000003, \(replica)),
                    ('\(namespace)', E'control\\x01key', NULL, 1, \(replica), 1000004, \(replica)),
                    ('\(namespace)', repeat('k', 200000), NULL, 1, \(replica), 1000005, \(replica)),
                    ('\(namespace)', 'fine.key', \(text), 1, \(replica), 1000006, \(replica))
                """)
            // A local write wakes the link: it pulls the forged rows.
            #expect(daemon.cli("set", "wake", "1").status == 0)
            try await waitUntil(timeout: 60) { daemon.cli("get", "fine.key").output == "forged\n" }
            let keys = daemon.cli("list", "--keys").output.split(separator: "\n")
            #expect(Set(keys) == ["before", "fine.key", "wake"], "\(keys)")
            #expect(daemon.cli("list").status == 0)
            #expect(daemon.cli("export").status == 0)
            // The forged sequence number did not become the cursor: later writes still travel.
            #expect(daemon.cli("set", "later", "4").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(try daemon.status().hubs.first?.isConnected == true)
        }

        @Test("a value far over the limits is refused inside PostgreSQL, never fetched, and the rest flows")
        func oversizeValueNeverFetched() async throws {
            let (daemon, cluster, namespace) = try member()
            let replica = bytea(Array(ReplicaID.random().bytes))
            let text = bytea(SettingValue.string("small").encoded())
            // 24 MiB: more than a pull's whole byte budget, twenty times the largest value allowed.
            try cluster.psql(
                """
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by) VALUES
                    ('\(namespace)', 'huge', decode(repeat('05', 25165824), 'hex'), 1, \(replica), 2000001, \(replica)),
                    ('\(namespace)', 'small', \(text), 1, \(replica), 2000002, \(replica))
                """)
            #expect(daemon.cli("set", "wake", "1").status == 0)
            try await waitUntil(timeout: 60) { daemon.cli("get", "small").output == "small\n" }
            #expect(daemon.cli("get", "huge").status == 1)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
        }
    }
}
