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
    /// The hub's own defences (schema version 2), each tried by a tenant, mallory, with plain
    /// `psql` and her own credentials, as the issue that asked for them observed the attacks.
    @Suite(
        "PostgreSQL hub: a tenant cannot read, hijack, stall or spy on another's namespace",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubDefencesTests {
        let directory = TemporaryDirectory()

        /// Runs `sql` with psql as the role of `url`; the output is psql's unaligned rows.
        private func psql(_ url: String, _ sql: String, database: String? = nil) -> CLIResult {
            let target =
                database.map { url.replacingOccurrences(of: "dbname=settings", with: "dbname=\($0)") } ?? url
            return DaemonProcess.run(
                [target, "-v", "ON_ERROR_STOP=1", "-Atqc", sql], through: "/usr/bin/psql")
        }

        /// Starts `psql` running `sql` as the role of `url` in the background (to hold a lock), and
        /// waits half a second for it to take hold.
        private func holding(_ url: String, _ sql: String) throws -> Process {
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            holder.arguments = [url, "-qc", sql]
            holder.standardOutput = FileHandle.nullDevice
            holder.standardError = FileHandle.nullDevice
            try holder.run()
            usleep(500_000)
            return holder
        }

        @Test(
            "nothing is granted to PUBLIC: a role without settingsd_user is refused, and works once granted")
        func noPublicGrants() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("outsider")
            try cluster.psql("REVOKE settingsd_user FROM \(role.name)")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let refused = psql(url, "SELECT count(*) FROM settingsd.entries")
            #expect(refused.status != 0)
            #expect(refused.error.contains("permission denied"), "\(refused.error)")
            try cluster.psql("GRANT settingsd_user TO \(role.name)")
            #expect(psql(url, "SELECT count(*) FROM settingsd.entries").output == "0\n")
        }

        @Test("a tenant's own '=' operator and predefined roles do not make another namespace visible")
        func searchPathAndPredefinedRoles() throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("alice")
            let mallory = try cluster.makeRole("mallory")
            try cluster.psql(
                "CREATE SCHEMA m_\(mallory.name) AUTHORIZATION \(mallory.name); GRANT pg_read_all_data TO \(mallory.name)"
            )
            let url = cluster.conninfo(user: mallory.name, password: mallory.password)
            let attack = """
                CREATE FUNCTION m_\(mallory.name).always(name, name) RETURNS boolean LANGUAGE sql AS 'SELECT true';
                CREATE OPERATOR m_\(mallory.name).= (LEFTARG = name, RIGHTARG = name, FUNCTION = m_\(mallory.name).always);
                SET search_path = m_\(mallory.name), pg_catalog;
                SELECT settingsd.visible('\(alice.name)'), settingsd.visible('pg_read_all_data');
                """
            let result = psql(url, attack)
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output == "f|f\n", "\(result.output)")
        }

        @Test("row-level security is forced on every hub table, for its owner too")
        func forcedRowLevelSecurity() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("inspect")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let tables = psql(
                url,
                """
                SELECT c.relname || ':' || c.relrowsecurity || c.relforcerowsecurity FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'settingsd' AND c.relkind = 'r'
                ORDER BY 1
                """)
            #expect(
                tables.output
                    == "batches:truetrue\nchannels:truetrue\nentries:truetrue\nfleets:truetrue\nmachine_groups:truetrue\nmeta:truetrue\nnamespaces:truetrue\npolicies:truetrue\npolicy_reports:truetrue\npolicy_revisions:truetrue\nreplica_names:truetrue\nreplicas:truetrue\nseals:truetrue\n",
                "\(tables.output)")
        }

        @Test(
            "hub init refuses a settingsd schema a tenant created, and a held migration lock fails it in time"
        )
        func initRefusesWhatItDidNotMake() throws {
            let cluster = try HubSyncTests.hub()
            let mallory = try cluster.makeRole("squatter")
            let database = try cluster.makeDatabase()
            try cluster.psql("GRANT CREATE ON DATABASE \(database) TO \(mallory.name)", database: "postgres")
            let url = cluster.conninfo(user: mallory.name, password: mallory.password)
            #expect(psql(url, "CREATE SCHEMA settingsd", database: database).status == 0)
            let admin = cluster.conninfo().replacingOccurrences(
                of: "dbname=settings", with: "dbname=\(database)")
            let refused = DaemonProcess.run(["hub", "init", admin])
            #expect(refused.status == 1)
            #expect(refused.error.contains("belongs to role '\(mallory.name)'"), "\(refused.error)")

            // A session holding the migration lock: init gives up with a reason.
            let holder = try holding(url, "SELECT pg_advisory_lock(7465746573); SELECT pg_sleep(30)")
            defer {
                // Ending psql leaves its backend asleep with the lock: end the backend itself.
                try? cluster.psql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(mallory.name)'"
                )
                holder.waitUntilExit()
            }
            let started = Date()
            let blocked = DaemonProcess.run(["hub", "init", cluster.conninfo()])
            #expect(blocked.status == 1)
            #expect(blocked.error.contains("migration lock"), "\(blocked.error)")
            #expect(Date().timeIntervalSince(started) < 20)
        }

        @Test(
            "users hold no table write: no lock, no FOR UPDATE, no insert, no push or join into another's namespace"
        )
        func noTableWrites() throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("written")
            let mallory = try cluster.makeRole("writer")
            let url = cluster.conninfo(user: mallory.name, password: mallory.password)
            let attacks = [
                "BEGIN; LOCK TABLE settingsd.entries IN ACCESS EXCLUSIVE MODE; COMMIT",
                "BEGIN; SELECT last_seq FROM settingsd.namespaces FOR UPDATE; COMMIT",
                "INSERT INTO settingsd.namespaces (namespace) VALUES ('\(mallory.name)')",
                "UPDATE settingsd.entries SET value = NULL",
            ]
            for attack in attacks {
                let result = psql(url, attack)
                #expect(result.status != 0, "\(attack)")
                #expect(result.error.contains("permission denied"), "\(attack): \(result.error)")
            }
            for call in [
                "SELECT settingsd.join('\(alice.name)')",
                "SELECT settingsd.push('\(alice.name)', NULL, '\\x00', 0, ARRAY['k'], ARRAY[NULL::bytea], ARRAY[1::bigint], ARRAY['\\x00'::bytea], NULL, NULL, NULL)",
                // The reading functions run as the owner too: they check membership the same way.
                "SELECT * FROM settingsd.pull_batch('\(alice.name)', NULL, 0, 10, 1000, 1000, 1000000, 20)",
                "SELECT * FROM settingsd.poll_plan('\(alice.name)', '\\x00')",
                "SELECT settingsd.notify('\(alice.name)')",
                "SELECT * FROM settingsd.digest('\(alice.name)')",
                "SELECT * FROM settingsd.bucket_sums('\(alice.name)')",
            ] {
                let result = psql(url, call)
                #expect(result.status != 0, "\(call)")
                #expect(
                    result.error.contains("may not use hub namespace \(alice.name)"),
                    "\(call): \(result.error)")
            }
            // Her own namespace she may join and push to, through the functions only.
            let own = psql(
                url,
                """
                SELECT length(settingsd.join(current_user));
                SELECT settingsd.push(current_user, NULL, '\\x00', 0, ARRAY['k'], ARRAY[NULL::bytea], ARRAY[1::bigint], ARRAY['\\x00'::bytea], NULL, NULL, NULL);
                SELECT key, hub_seq FROM settingsd.entries
                """)
            #expect(own.status == 0, "\(own.error)")
            #expect(own.output == "32\n0\nk|1\n", "\(own.output)")
        }

        @Test(
            "a member holding its namespace's counter stalls nobody: the push times out, status says why, and sync resumes"
        )
        func locksTimeOut() async throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("stalled")
            let url = cluster.conninfo(user: alice.name, password: alice.password)
            let daemon = try DaemonProcess(directory, arguments: ["--hub", url])
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            // The one lock a user can take: its own counter row, by a push left in an open transaction.
            let holder = try holding(
                url,
                """
                BEGIN; SELECT settingsd.push(current_user, NULL, '\\x00', 0, ARRAY['held'], ARRAY[NULL::bytea],
                    ARRAY[1::bigint], ARRAY['\\x00'::bytea], NULL, NULL, NULL); SELECT pg_sleep(7); COMMIT
                """)
            #expect(daemon.cli("set", "during.lock", "1").status == 0)
            try await waitUntil(timeout: 60) {
                try daemon.status().hubs.first?.lastError?.contains("lock timeout") == true
            }
            holder.waitUntilExit()
            #expect(daemon.cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test(
            "a hub made by an owner who is no superuser: row-level security holds for it, and its users sync through the functions"
        )
        func ownerWithoutSuperuser() async throws {
            let cluster = try HubSyncTests.hub()
            let owner = try cluster.makeRole("owner")
            let database = try cluster.makeDatabase()
            try cluster.psql("GRANT CREATE ON DATABASE \(database) TO \(owner.name)", database: "postgres")
            let ownerURL = cluster.conninfo(user: owner.name, password: owner.password, database: database)
            let initialised = DaemonProcess.run(["hub", "init", ownerURL])
            #expect(initialised.status == 0, "\(initialised.error)")
            let alice = try cluster.makeRole("tenant")
            let aliceURL = cluster.conninfo(user: alice.name, password: alice.password, database: database)
            let a = try DaemonProcess(directory, arguments: ["--hub", aliceURL])
            let b = try DaemonProcess(TemporaryDirectory(), arguments: ["--hub", aliceURL])
            let o = try DaemonProcess(TemporaryDirectory(), arguments: ["--hub", ownerURL])
            #expect(a.cli("set", "ui.theme", "dark").status == 0)
            #expect(o.cli("set", "owner.key", "1").status == 0)
            #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)
            #expect(o.cli("sync", "--wait", "--timeout", "20").status == 0)
            try await waitUntil(timeout: 60) { b.cli("get", "ui.theme").output == "dark\n" }
            // The owner sees its own namespace only, though it owns the tables.
            let seen = psql(ownerURL, "SELECT DISTINCT namespace FROM settingsd.entries")
            #expect(seen.output == "\(owner.name)\n", "\(seen.output) \(seen.error)")
            #expect(b.cli("get", "owner.key").status != 0)
        }

        @Test("a flood of notifications costs a listening link at most one round per 50 ms")
        func notificationsAreCoalesced() async throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("flooded")
            let url = cluster.conninfo(user: alice.name, password: alice.password)
            let settings = Settings(inMemoryWith: .init())
            let link = try settings.sync(withHub: HubConfiguration(url: url))
            defer { link.stop() }
            try settings.set(1, forKey: "before")
            try await waitUntil(timeout: 60) { link.status.isConnected && link.status.pendingUp == 0 }
            // A member knows the channel; 3,000 notifications, each in a transaction of its own.
            let secret = psql(url, "SELECT secret FROM settingsd.channels WHERE namespace = current_user")
                .output.trimmingCharacters(in: .whitespacesAndNewlines)
            let file = directory.file("flood.sql")
            try String(repeating: "NOTIFY settingsd_\(secret);\n", count: 3_000)
                .write(toFile: file, atomically: true, encoding: .utf8)
            let before = link.status.statements
            let started = Date()
            let flood = DaemonProcess.run([url, "-q", "-f", file], through: "/usr/bin/psql")
            let seconds = Date().timeIntervalSince(started)
            let spent = link.status.statements - before
            #expect(flood.status == 0, "\(flood.error)")
            // A round is a pull and a look at the counter (a comparison now and then): three
            // statements at most, once per 50 ms, and a round or two of slack either side.
            let rounds = seconds / HubConnector.notificationInterval + 3
            #expect(Double(spent) <= 3 * rounds, "\(spent) statements in \(seconds) s")
            #expect(link.status.isConnected)
        }

        @Test("another tenant cannot learn a namespace's notification channel")
        func channelsAreSecret() throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("listened")
            let daemon = try DaemonProcess(
                directory, arguments: ["--hub", cluster.conninfo(user: alice.name, password: alice.password)])
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            let mallory = try cluster.makeRole("spy")
            let url = cluster.conninfo(user: mallory.name, password: mallory.password)
            #expect(
                psql(url, "SELECT count(*) FROM settingsd.channels WHERE namespace = '\(alice.name)'").output
                    == "0\n")
            let own = cluster.conninfo(user: alice.name, password: alice.password)
            let secret = psql(own, "SELECT secret FROM settingsd.channels WHERE namespace = current_user")
                .output
            #expect(secret.count == 33, "\(secret)")
        }
    }
}
