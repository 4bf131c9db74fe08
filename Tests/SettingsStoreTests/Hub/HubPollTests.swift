import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

extension HubReliability {
    @Suite(
        "Polls: a fast-path call asks whether the counter moved, the plan paces the link, and a quiet hub spares comparisons",
        .enabled(if: PostgresCluster.testsEnabled, "needs PostgreSQL (apt-get install postgresql)")
    )
    struct HubPollTests {
        /// A hub in a database of its own (edits by hand elsewhere move nothing here) and a
        /// namespace there, opened by its role through simple queries (as through a pooler)
        /// unless `prepared`; through a PgBouncer of its own when `pooled` (the result holds it).
        func hub(_ prefix: String, prepared: Bool = false, pooled: Bool = false) throws -> (
            hub: HubNamespace, admin: PostgresConnection, role: (name: String, password: String),
            conninfo: String, pooler: PgBouncer?, adminURL: String
        ) {
            let cluster = try PostgresCluster.shared()
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database))
            let adminURL = cluster.conninfo(database: database)
            let admin = try PostgresConnection(conninfo: adminURL)
            let role = try cluster.makeRole(prefix)
            let pooler = pooled ? try PgBouncer(cluster: cluster, users: [role]) : nil
            let conninfo =
                pooler?.conninfo(user: role.name, password: role.password, database: database)
                ?? cluster.conninfo(user: role.name, password: role.password, database: database)
            let connection = try PostgresConnection(conninfo: conninfo)
            connection.preparesStatements = prepared
            let hub = try HubNamespace(connection: connection, namespace: nil, listens: false)
            return (hub, admin, role, conninfo, pooler, adminURL)
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
            "the first poll is the counter's statement and asks the number; the next are calls, one statement each"
        )
        func pollsByCall() throws {
            let (hub, _, role, conninfo, _, _) = try hub("calls")
            let other = try HubNamespace(
                connection: PostgresConnection(conninfo: conninfo), namespace: role.name, listens: false)
            var call = HubPollCall()
            let counter = try hub.lastSequence()
            let first = try hub.poll(from: counter, call: &call)
            #expect(!first.moved && !first.byCall && call.number != nil)
            let statements = hub.connection.statementCount
            for _ in 0..<3 {
                let polled = try hub.poll(from: counter, call: &call)
                #expect(!polled.moved && polled.byCall)
            }
            #expect(hub.connection.statementCount - statements == 3)
            let writer = ReplicaID.random()
            try other.push([entry("k", 1, by: writer)], from: writer, through: 1)
            let moved = try hub.poll(from: counter, call: &call)
            #expect(moved.moved && moved.byCall)
            #expect(try !hub.poll(from: other.lastSequence(), call: &call).moved)
        }

        /// One step of `neverWrong`.
        private enum Step: CaseIterable {
            case push, pushElsewhere, begin, commit, rollBack, poll
        }

        @Test(
            "over random pushes, edits left open, commits, rollbacks and other namespaces, a poll is never wrong, prepared or not"
        )
        func neverWrong() throws {
            var generator = SystemRandomNumberGenerator()
            for prepared in [false, true] {
                let (hub, admin, role, conninfo, _, adminURL) = try hub("model", prepared: prepared)
                let pusher = try HubNamespace(
                    connection: PostgresConnection(conninfo: conninfo), namespace: nil, listens: false)
                let elsewhereRole = try PostgresCluster.shared().makeRole("elsewhere")
                try admin.execute("GRANT \(elsewhereRole.name) TO \(role.name)")
                let elsewhere = try HubNamespace(
                    connection: PostgresConnection(conninfo: conninfo), namespace: elsewhereRole.name,
                    listens: false)
                let editor = try PostgresConnection(conninfo: adminURL)
                let writer = ReplicaID.random()
                var (pushed, isEditing, calls) = (Int64(0), false, 0)
                var call = HubPollCall()
                var known = try hub.lastSequence()
                func truth() throws -> Int64 {
                    try admin.execute(
                        "SELECT last_seq FROM settingsd.namespaces WHERE namespace = $1", [.text(role.name)]
                    ).int64(0, 0)
                }
                for _ in 0..<300 {
                    let step =
                        Bool.random(using: &generator)
                        ? .poll : (Step.allCases.randomElement(using: &generator) ?? .poll)
                    switch step {
                    case .push where !isEditing:  // it would wait for the edit's lock on the counter
                        pushed += 1
                        try pusher.push(
                            [entry("k\(pushed % 7)", UInt64(pushed), by: writer)], from: writer,
                            through: pushed)
                    case .pushElsewhere:
                        try elsewhere.push(
                            [entry("e", UInt64(pushed + 1), by: writer)], from: writer, through: pushed + 1)
                    case .begin where !isEditing:
                        try editor.execute("BEGIN")
                        try editor.execute(
                            "UPDATE settingsd.namespaces SET last_seq = last_seq + 1 WHERE namespace = $1",
                            [.text(role.name)])
                        isEditing = true
                    case .commit where isEditing, .rollBack where isEditing:
                        try editor.execute(step == .commit ? "COMMIT" : "ROLLBACK")
                        isEditing = false
                    case .poll:
                        let polled = try hub.poll(from: known, call: &call)
                        let now = try truth()
                        #expect(polled.moved == (now != known), "prepared: \(prepared)")
                        if polled.byCall { calls += 1 }
                        // Half the time the link catches up, half it keeps a stale counter.
                        if Bool.random(using: &generator) { known = now }
                    default:
                        break  // a push during an edit, an edit that cannot begin or end now
                    }
                }
                if isEditing { try editor.execute("ROLLBACK") }
                #expect(calls > 50, "prepared: \(prepared); \(calls) calls")
            }
        }

        @Test(
            "a renumbered function is asked for again; one answering anything but 0 is a move; one returning bigint is never called"
        )
        func renumberedOrStrangeFunctions() throws {
            let (hub, admin, _, _, _, _) = try hub("strange")
            var call = HubPollCall()
            let counter = try hub.lastSequence()
            _ = try hub.poll(from: counter, call: &call)
            let first = try #require(call.number)
            let definition = try admin.execute(
                "SELECT pg_get_functiondef('settingsd.moved(name, bigint)'::regprocedure)"
            ).text(0, 0)
            let grant = "GRANT EXECUTE ON FUNCTION settingsd.moved(name, bigint) TO settingsd_user"

            // Dropped and made again, as a restore into a new cluster may number it anew.
            try admin.executeScript("DROP FUNCTION settingsd.moved(name, bigint); \(definition); \(grant)")
            let refused = try hub.poll(from: counter, call: &call)
            #expect(
                !refused.moved && !refused.byCall, "refused once: the statement answers, and asks the number")
            let second = try #require(call.number)
            #expect(second != first)
            #expect(try hub.poll(from: counter, call: &call).byCall)

            // Answering 7, or NULL: a move each time (the hub's own cost), never a missed change.
            for answer in ["7", "NULL::integer"] {
                try admin.executeScript(
                    "CREATE OR REPLACE FUNCTION settingsd.moved(namespace name, counter bigint) RETURNS integer LANGUAGE sql AS 'SELECT \(answer)'"
                )
                let polled = try hub.poll(from: counter, call: &call)
                #expect(polled.moved && polled.byCall, "answering \(answer)")
            }

            // Eight bytes of answer, which a fast-path call cannot take: the catalog says so, and
            // the link calls no more once the call was refused and the number read again.
            try admin.executeScript(
                "DROP FUNCTION settingsd.moved(name, bigint); CREATE FUNCTION settingsd.moved(namespace name, counter bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'; \(grant)"
            )
            #expect(try !hub.poll(from: counter, call: &call).moved)
            #expect(try !hub.poll(from: counter, call: &call).moved)
            #expect(call.state == .unusable)
        }

        @Test(
            "through PgBouncer in transaction pooling the poll is a fast-path call too, and what it answers decides"
        )
        func pollCallThroughThePooler() throws {
            guard PgBouncer.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil
            else {
                return
            }
            let (hub, admin, _, _, pooler, _) = try hub("pooled", pooled: true)
            #expect(try hub.connection.isPooled())
            var call = HubPollCall()
            let counter = try hub.lastSequence()
            _ = try hub.poll(from: counter, call: &call)
            let quiet = try hub.poll(from: counter, call: &call)
            #expect(quiet.byCall && !quiet.moved)
            try admin.executeScript(
                "CREATE OR REPLACE FUNCTION settingsd.moved(namespace name, counter bigint) RETURNS integer LANGUAGE sql AS 'SELECT 1'"
            )
            let moved = try hub.poll(from: counter, call: &call)
            #expect(moved.byCall && moved.moved, "the call decided")
            withExtendedLifetime(pooler) {}
        }

        @Test("a role denied the function polls by statement, and stops calling")
        func deniedFunction() throws {
            let (hub, admin, _, _, _, _) = try hub("denied")
            var call = HubPollCall()
            let counter = try hub.lastSequence()
            _ = try hub.poll(from: counter, call: &call)
            #expect(call.number != nil)
            try admin.executeScript(
                "REVOKE EXECUTE ON FUNCTION settingsd.moved(name, bigint) FROM settingsd_user")
            #expect(try !hub.poll(from: counter, call: &call).moved)
            #expect(call.state == .unusable, "a denial is not asked again")
            #expect(try !hub.poll(from: counter, call: &call).byCall)
        }

        @Test(
            "a fast-path call to a frozen server process gives up at the stall time-out, as a statement does")
        func frozenCallTimesOut() throws {
            let (hub, _, _, _, _, _) = try hub("frozen")
            hub.connection.stallTimeout = .seconds(1)
            var call = HubPollCall()
            let counter = try hub.lastSequence()
            _ = try hub.poll(from: counter, call: &call)
            let backend = try hub.connection.query("SELECT pg_catalog.pg_backend_pid()")
            let pid = try #require(Int32(backend.text(0, 0)))
            #expect(call.number != nil)
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            let started = Deadline.now
            do {
                _ = try hub.poll(from: counter, call: &call)
                Issue.record("a poll of a frozen server process returned")
            } catch {
                #expect(error.code == .timeout)
                #expect(error.message.contains("stalled"))
            }
            let waited = (Deadline.now - started).seconds
            #expect(waited >= 0.9 && waited < 10, "waited \(waited) s")
        }

        @Test(
            "the plan counts the namespace's machines seen in a week, once a minute at most, with the hub's rate and mark"
        )
        func plans() throws {
            let (hub, admin, role, conninfo, _, adminURL) = try hub("plan")
            let me = ReplicaID.random()
            let empty = try hub.pollPlan(for: me)
            #expect(empty.replicas == 0 && empty.rate == HubPollPlan.defaultRate && empty.mark.edits == 0)
            let machines = (0..<5).map { _ in ReplicaID.random() }
            for machine in machines { try hub.push([], from: machine, through: 0) }
            #expect(try hub.pollPlan(for: me).replicas == 0, "counted less than a minute ago")
            try admin.execute("UPDATE settingsd.fleets SET counted_at = now() - interval '2 minutes'")
            #expect(try hub.pollPlan(for: me).replicas == 5)
            // A machine not seen for eight days is no longer counted; one it hears from is.
            try admin.execute(
                "UPDATE settingsd.replicas SET last_seen = now() - interval '8 days' WHERE replica = ANY($1)",
                [.bytesArray(machines.prefix(2).map(\.bytes))])
            try admin.execute("UPDATE settingsd.fleets SET counted_at = now() - interval '2 minutes'")
            #expect(try hub.pollPlan(for: me).replicas == 3)
            let returning = try HubNamespace(
                connection: PostgresConnection(conninfo: conninfo), namespace: role.name, listens: false)
            _ = try returning.pollPlan(for: machines[0])
            try admin.execute("UPDATE settingsd.fleets SET counted_at = now() - interval '2 minutes'")
            #expect(try hub.pollPlan(for: me).replicas == 4, "its plan said it is here")
            _ = try HubAdministration.initialize(url: adminURL, pollRate: 400)
            let plan = try hub.pollPlan(for: me)
            let counter = try hub.lastSequence()
            #expect(plan.rate == 400 && plan.mark.counter == counter)
            // An edit by hand moves the mark; a push moves its counter.
            try admin.execute("DELETE FROM settingsd.entries WHERE key = 'nothing'")
            #expect(try hub.pollPlan(for: me).mark.edits == 1)
            try hub.push([entry("k", 1, by: me)], from: me, through: 1)
            let pushed = try hub.pollPlan(for: me).mark
            #expect(pushed.edits == 1 && pushed.counter == plan.mark.counter + 1)
        }

        @Test(
            "a polling link on a quiet hub polls by fast-path call, follows the plan, and still takes the next change at once"
        )
        func linkPollsByCall() async throws {
            let (_, _, _, conninfo, _, adminURL) = try hub("link")
            _ = try HubAdministration.initialize(url: adminURL, pollRate: 10)
            let url = conninfo + " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.2"
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let hubA = try a.sync(withHub: HubConfiguration(url: url))
            defer { hubA.stop() }
            let hubB = try b.sync(withHub: HubConfiguration(url: url))
            defer { hubB.stop() }
            try a.set("first", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "first" }
            try await waitUntil(timeout: 60) { hubB.status.pollCalls >= 5 }
            #expect(hubB.status.mode == "poll" && hubB.status.lastError == nil)
            #expect(hubB.status.pollRate == 10 && hubB.status.longestPollSeconds == 0.2)
            try a.set("second", forKey: "k")
            try await waitUntil(timeout: 60) { b.value(forKey: "k") == "second" }
        }

        @Test(
            "a polling link spares its routine comparisons while the hub holds what it held, and still finds and repairs a row deleted by hand"
        )
        func quietLinkSparesComparisons() async throws {
            let (_, admin, role, conninfo, _, _) = try hub("spare")
            var configuration = HubConfiguration(
                url: conninfo + " settingsd_pool=transaction settingsd_poll_min=0.05 settingsd_poll_max=0.2")
            configuration.comparisonInterval = .milliseconds(500)
            let settings = Settings(inMemoryWith: .init())
            let hub = try settings.sync(withHub: configuration)
            defer { hub.stop() }
            try settings.set("kept", forKey: "k")
            try await waitUntil(timeout: 60) { hub.status.comparisonsSpared >= 2 }
            #expect(hub.status.agreement == "agreed")
            let compared = hub.status.comparisons
            func rows() throws -> Int64 {
                try admin.execute(
                    "SELECT count(*)::bigint FROM settingsd.entries WHERE namespace = $1", [.text(role.name)]
                ).int64(0, 0)
            }
            #expect(try rows() == 1)
            try admin.execute("DELETE FROM settingsd.entries WHERE namespace = $1", [.text(role.name)])
            #expect(try rows() == 0)
            // The repair lands on the hub before the comparison that made it is counted.
            try await waitUntil(timeout: 60) { try rows() == 1 && hub.status.repairedKeys == 1 }
            #expect(hub.status.comparisons > compared, "the edit moved the hub's mark: a comparison ran")
            #expect(hub.status.lastError == nil)
        }
    }
}
