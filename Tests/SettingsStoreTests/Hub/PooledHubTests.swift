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
            let hubA = try a.sync(
                withHub: HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.seconds(5))))
            defer { hubA.stop() }
            let hubB = try b.sync(
                withHub: HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.seconds(5))))
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
            let fast = HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.milliseconds(500)))
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
            "a quiet link backs off to its longest interval, each poll one fast-path call; a change still arrives"
        )
        func longIdle() async throws {
            // The pooler closes idle server connections after a second: every quiet poll finds none.
            let (_, pooler, role) = try pooler("idle", settings: ["server_idle_timeout": "1"])
            let url = pooler.conninfo(
                user: role.name, password: role.password, extra: "settingsd_poll_max=0.4")
            try await withSyncedPair(url: url) { a, b, hubB in
                try await waitUntil(timeout: 60) {
                    hubB.status.pollSeconds == 0.4 && hubB.status.comparisons > 0
                }
                let quiet = hubB.status
                try await Task.sleep(for: .seconds(2.5))
                let later = hubB.status
                let polls = later.polls - quiet.polls
                #expect(polls >= 3, "\(polls) polls in 2.5 s at 0.4 s")
                #expect(later.pollCalls - quiet.pollCalls == polls, "every quiet poll a call")
                // A poll may be between its count and its statement at either snapshot; a
                // comparison (the first may still run) adds statements of its own.
                let extra = (later.statements - quiet.statements) - polls
                if later.comparisons == quiet.comparisons {
                    #expect(extra >= -1 && extra <= 1, "\(quiet) → \(later)")
                }
                let written = ContinuousClock.now
                try a.set("after a long idle", forKey: "k")
                try await waitUntil(timeout: 60) { b.value(forKey: "k") == "after a long idle" }
                let took = ContinuousClock.now - written
                #expect(took < .seconds(10), "\(took)")
            }
        }

        @Test(
            "a namespace of more machines than the hub's rate allows at the floor polls at machines / rate; a change still arrives"
        )
        func intervalFollowsTheFleet() async throws {
            let (cluster, pooler, role) = try pooler("fleet")
            // A database of its own: the poll rate is the hub's.
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database), pollRate: 10)
            let url = pooler.conninfo(
                user: role.name, password: role.password, database: database, extra: "settingsd_poll_max=0.1")
            // Twenty other machines of the namespace, as their first rounds record them.
            let others = try HubNamespace(
                connection: PostgresConnection(
                    conninfo: cluster.conninfo(user: role.name, password: role.password, database: database)),
                namespace: nil, listens: false)
            for _ in 0..<20 { try others.push([], from: .random(), through: 0) }
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let configuration = HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.seconds(5)))
            let hubA = try a.sync(withHub: configuration)
            defer { hubA.stop() }
            let hubB = try b.sync(withHub: configuration)
            defer { hubB.stop() }
            try await waitUntil(timeout: 60) { hubB.status.pollReplicas != nil }
            // The twenty, and A and B themselves once their first rounds have recorded them.
            let replicas = try #require(hubB.status.pollReplicas)
            #expect((20...22).contains(replicas) && hubB.status.pollRate == 10, "\(replicas)")
            let longest = Double(replicas) / 10
            #expect(hubB.status.longestPollSeconds == longest, "\(replicas) machines at 10 polls a second")
            try a.set("paced", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "paced" }
            try await waitUntil(timeout: 60) { hubB.status.pollSeconds == longest }
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
