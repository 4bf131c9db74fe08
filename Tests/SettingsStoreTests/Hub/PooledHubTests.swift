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
        "PostgreSQL hub through PgBouncer in transaction pooling: polls, converges, survives the pooler",
        .enabled(
            if: PostgresCluster.testsEnabled
                && (PgBouncer.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil),
            "needs PostgreSQL and PgBouncer (apt-get install postgresql pgbouncer)")
    )
    struct PooledHubTests {
        let directory = TemporaryDirectory()
        private static let admin = (name: "postgres", password: "admin-pw")

        /// A role, and a pooler in front of the shared cluster that knows it.
        private func pooler(_ prefix: String, settings: [String: String] = [:]) throws -> (
            cluster: PostgresCluster, pooler: PgBouncer, role: (name: String, password: String)
        ) {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole(prefix)
            let pooler = try PgBouncer(cluster: cluster, users: [role, Self.admin], settings: settings)
            return (cluster, pooler, role)
        }

        /// Two in-memory stores synced through `url`, polling from 0.05 s on.
        /// Two in-memory stores linked through the hub at `url`, with a first write of `k` on `a`
        /// arrived at `b`, for `body`; both links stop after it, whatever it throws.
        private func withSyncedPair(
            url: String, _ body: (_ a: Settings, _ b: Settings, _ hubB: HubLink) async throws -> Void
        ) async throws {
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let hubA = try a.sync(withHub: HubConfiguration(url: url, pollInterval: 0.05...5))
            defer { hubA.stop() }
            let hubB = try b.sync(withHub: HubConfiguration(url: url, pollInterval: 0.05...5))
            defer { hubB.stop() }
            try a.set("first", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "first" }
            try await body(a, b, hubB)
        }

        @Test("daemons through the pooler find it on their own, poll, converge, and sync --wait is honest")
        func daemonsConverge() async throws {
            let (_, pooler, role) = try pooler("pooled")
            let url = pooler.conninfo(user: role.name, password: role.password)
            let nodes = try (0..<2).map { index in
                try DaemonProcess(
                    directory, database: directory.file("p\(index).sqlite"), arguments: ["--hub", url])
            }
            _ = nodes[0].cli("set", "ui.theme", "dark")
            _ = nodes[1].cli("set", "doomed", "x")
            try await waitUntil(timeout: 30) {
                nodes[1].cli("get", "ui.theme").output == "dark\n"
                    && nodes[0].cli("get", "doomed").status == 0
            }
            _ = nodes[0].cli("delete", "doomed")
            for (index, node) in nodes.enumerated() { _ = node.cli("set", "contended", "node \(index)") }
            try await waitUntil(timeout: 30) { Set(try nodes.map { try $0.status().digest }).count == 1 }
            for node in nodes {
                #expect(node.cli("get", "doomed").status == 1)
                #expect(node.cli("sync", "--wait", "--timeout", "20").status == 0)
                let hub = try #require(try node.status().hubs.first)
                #expect(hub.mode == "poll")
                #expect(hub.isConnected)
            }
            let printed = nodes[0].cli("status").output
            #expect(printed.contains("polling (through a pooler)"), "\(printed)")
        }

        @Test("rows deleted on the hub by hand: sync --wait repairs them and then says all agree")
        func syncWaitConfirmsItsRepair() async throws {
            let (cluster, pooler, role) = try pooler("repair")
            let url = pooler.conninfo(user: role.name, password: role.password)
            let node = try DaemonProcess(
                directory, database: directory.file("repair.sqlite"), arguments: ["--hub", url])
            for index in 0..<10 { #expect(node.cli("set", "key.\(index)", "\(index)").status == 0) }
            #expect(node.cli("sync", "--wait", "--timeout", "20").status == 0)
            try cluster.psql("DELETE FROM settingsd.entries WHERE namespace = '\(role.name)'")
            let started = Date()
            let wait = node.cli("sync", "--wait", "--timeout", "20")
            #expect(wait.status == 0, "\(wait.error)")
            #expect(Date().timeIntervalSince(started) < 15)
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT count(*) FROM settingsd.entries WHERE namespace = $1", [.text(role.name)])
            #expect(rows.int64(0, 0) == 10)
        }

        @Test("the pooler stopped and started again: a daemon writing meanwhile loses nothing")
        func poolerRestarts() async throws {
            let (_, pooler, role) = try pooler("restart")
            let url = pooler.conninfo(user: role.name, password: role.password)
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let fast = HubConfiguration(url: url, pollInterval: 0.05...0.5)
            let hubA = try a.sync(withHub: fast)
            let hubB = try b.sync(withHub: fast)
            defer {
                hubA.stop()
                hubB.stop()
            }
            try a.set(1, forKey: "before")
            try await waitUntil(timeout: 60) { b.value(forKey: "before") == 1 }
            pooler.stop()
            try await waitUntil(timeout: 60) { !hubA.status.isConnected && !hubB.status.isConnected }
            try a.transaction { transaction in
                for index in 0..<200 { try transaction.set(index, forKey: "while.down.\(index)") }
            }
            try b.set("b", forKey: "from.b")
            try pooler.start()
            try await waitForConvergence([a, b], timeout: 30)
            #expect(b.value(forKey: "while.down.199") == 199)
            #expect(a.value(forKey: "from.b") == "b")
            #expect(hubA.status.mode == "poll")
        }

        @Test(
            "a quiet link backs off to its longest interval, each poll one statement; a change still arrives")
        func longIdle() async throws {
            // The pooler closes idle server connections after a second: every quiet poll finds none.
            let (_, pooler, role) = try pooler("idle", settings: ["server_idle_timeout": "1"])
            let url = pooler.conninfo(
                user: role.name, password: role.password,
                extra: "settingsd_poll_max=0.4 settingsd_poll_budget=0")
            try await withSyncedPair(url: url) { a, b, hubB in
                try await waitUntil(timeout: 60) { hubB.status.pollSeconds == 0.4 }
                let quiet = hubB.status
                try await Task.sleep(for: .seconds(2.5))
                let later = hubB.status
                let polls = later.polls - quiet.polls
                #expect(polls >= 3, "\(polls) polls in 2.5 s at 0.4 s")
                // A poll is one statement; one that a quiet check could not answer (the shared
                // cluster's snapshot moved) reads the counter too. A poll may be between its count
                // and its statement at either snapshot.
                let extra = (later.statements - quiet.statements) - polls
                let unanswered = polls - (later.quietChecks - quiet.quietChecks)
                #expect(extra >= -1 && extra <= unanswered + 1, "\(quiet) → \(later)")
                let written = ContinuousClock.now
                try a.set("after a long idle", forKey: "k")
                try await waitUntil(timeout: 60) { b.value(forKey: "k") == "after a long idle" }
                let took = ContinuousClock.now - written
                #expect(took < .seconds(10), "\(took)")
            }
        }

        @Test(
            "a link on a hub busier than its poll budget stretches its longest interval, and a change still arrives; one without a budget keeps the most"
        )
        func stretchesUnderLoad() async throws {
            let (_, pooler, role) = try pooler("stretch")
            func link(_ settings: Settings, budget: String) throws -> HubLink {
                let url = pooler.conninfo(
                    user: role.name, password: role.password,
                    extra: "settingsd_poll_max=0.1 settingsd_poll_budget=\(budget)")
                return try settings.sync(withHub: HubConfiguration(url: url, pollInterval: 0.05...5))
            }
            let (a, b, c) = (
                Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()),
                Settings(inMemoryWith: .init())
            )
            // The links' own polls alone, ten a second each, are over a budget of one.
            let (hubA, hubB, hubC) = (
                try link(a, budget: "0"), try link(b, budget: "1"), try link(c, budget: "0")
            )
            defer {
                hubA.stop()
                hubB.stop()
                hubC.stop()
            }
            try await waitUntil(timeout: 60) { hubB.status.pollSeconds >= 0.5 }
            #expect(hubB.status.pollSeconds <= 0.1 * PollSchedule.maximumStretch)
            #expect(hubC.status.pollSeconds == 0.1, "no budget: polls at the most")
            try a.set("while stretched", forKey: "k")
            try await waitUntil(timeout: 60) {
                b.value(forKey: "k") == "while stretched" && c.value(forKey: "k") == "while stretched"
            }
        }

        @Test("a role that may not read the hub's statistics polls within its bounds and still syncs")
        func statisticsRefused() async throws {
            let (cluster, pooler, role) = try pooler("nostats")
            // A database of its own: the statistics are refused in it alone.
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database))
            try cluster.psql(
                "REVOKE EXECUTE ON FUNCTION pg_catalog.pg_stat_get_db_xact_commit(oid) FROM PUBLIC",
                database: database)
            let url = pooler.conninfo(
                user: role.name, password: role.password, database: database,
                extra: "settingsd_poll_max=0.1 settingsd_poll_budget=1")
            try await withSyncedPair(url: url) { a, b, hubB in
                // Long enough for a dozen quiet polls a few times over: a budget of one would have
                // stretched the interval had the statistics been readable (stretchesUnderLoad).
                try await Task.sleep(for: .seconds(4))
                #expect(hubB.status.pollSeconds == 0.1)
                #expect(hubB.status.isConnected && hubB.status.lastError == nil, "\(hubB.status)")
                try a.set("second", forKey: "k")
                try await waitUntil(timeout: 60) { b.value(forKey: "k") == "second" }
            }
        }

        @Test("a poll reads the hub database's transaction count with the counter, simple and prepared")
        func pollReadsLoad() async throws {
            let (cluster, pooler, role) = try pooler("load")
            let pooled = try HubNamespace(
                connection: PostgresConnection(
                    conninfo: pooler.conninfo(user: role.name, password: role.password)),
                namespace: nil, listens: false)
            let direct = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password))
            direct.preparesStatements = true
            let prepared = try HubNamespace(connection: direct, namespace: nil, listens: false)
            for hub in [pooled, prepared] {
                let first = try hub.poll(readingLoad: true)
                #expect(first.counter == (try hub.lastSequence()))
                let start = try #require(first.transactions)
                for _ in 0..<20 { _ = try hub.poll(readingLoad: false) }
                // The server's statistics lag a second or so behind its transactions.
                try await waitUntil(timeout: 30) {
                    (try hub.poll(readingLoad: true).transactions ?? 0) >= start + 20
                }
                #expect(try hub.poll(readingLoad: false).transactions == nil)
            }
        }

        @Test(
            "a pooler that ignores the options parameter is found too: its server process is not the one it announced"
        )
        func poolerFoundByProcess() async throws {
            let (_, pooler, role) = try pooler("quiet", settings: ["ignore_startup_parameters": "options"])
            let settings = Settings(inMemoryWith: .init())
            let link = try settings.sync(
                withHub: HubConfiguration(url: pooler.conninfo(user: role.name, password: role.password)))
            defer { link.stop() }
            try await waitUntil(timeout: 60) { link.status.isConnected }
            #expect(link.status.mode == "poll")
        }

        @Test("hub init works through the pooler, on a new database and again on the same")
        func initialiseThroughPooler() throws {
            let (cluster, pooler, _) = try pooler("init")
            let database = try cluster.makeDatabase()
            let url = pooler.conninfo(
                user: Self.admin.name, password: Self.admin.password, database: database)
            let first = try HubAdministration.initialize(url: url + " settingsd_pool=transaction")
            #expect(first == (0, HubSchema.current))
            let again = try HubAdministration.initialize(url: url)
            #expect(again == (HubSchema.current, HubSchema.current))
            let report = try HubAdministration.report(url: url)
            #expect(report.schemaVersion == HubSchema.current)
        }
    }
}
