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

/// Quiet checks as fast-path calls of `settingsd.unmoved(look)` (hub schema 13), on the quiet
/// checks' private cluster.
extension HubReliability.HubQuietCheckTests {
    /// A new database on the private cluster with a hub at schema `version`, and a namespace of
    /// its own there, opened by its role through simple queries (through a PgBouncer of its own
    /// when `pooled`, which lives as long as the connection needs it: the result holds it).
    private func hub(at version: Int64, _ prefix: String, pooled: Bool = false) throws -> (
        hub: HubNamespace, admin: PostgresConnection, pooler: PgBouncer?
    ) {
        let cluster = try Self.cluster.get()
        let database = try cluster.makeDatabase()
        let admin = try PostgresConnection(conninfo: cluster.conninfo(database: database))
        try HubSchema.migrate(admin, through: version)
        let role = try cluster.makeRole(prefix)
        let pooler = pooled ? try PgBouncer(cluster: cluster, users: [role]) : nil
        let conninfo =
            pooler?.conninfo(user: role.name, password: role.password, database: database)
            ?? cluster.conninfo(user: role.name, password: role.password, database: database)
        let connection = try PostgresConnection(conninfo: conninfo)
        return (try HubNamespace(connection: connection, namespace: nil, listens: false), admin, pooler)
    }

    /// Polls until one is a quiet check, at most `limit` times; the polls' counters must be `counter`.
    private func pollUntilQuiet(
        _ hub: HubNamespace, _ quiet: inout HubQuietCheck, counter: Int64, limit: Int = 6
    ) throws -> Bool {
        for _ in 0..<limit {
            let polled = try hub.poll(readingLoad: false, quiet: &quiet)
            #expect(polled.counter == counter)
            if polled.checkedQuietly { return true }
        }
        return false
    }

    @Test("a hub before schema 13 has its quiet checks as statements, as before")
    func olderHubChecksByStatement() throws {
        let (hub, _, _) = try hub(at: 12, "older")
        var quiet = HubQuietCheck()
        let counter = try hub.lastSequence()
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        #expect(quiet.function == .unusable && quiet.callable == nil)
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter, limit: 1), "and again")
    }

    @Test(
        "a renumbered function is asked for again; one answering anything but 1 is never quiet; one returning bigint is never called"
    )
    func renumberedOrStrangeFunctions() throws {
        let (hub, admin, _) = try hub(at: 13, "strange")
        var quiet = HubQuietCheck()
        let counter = try hub.lastSequence()
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        let first = try #require(quiet.callable)

        // Dropped and made again, as a restore into a new cluster may number it anew.
        try admin.executeScript("DROP FUNCTION settingsd.unmoved(text);" + HubSchema.quietCall)
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        let second = try #require(quiet.callable)
        #expect(second != first)

        // The same number, answering 7: every poll reads the counter, and it is always right. (So
        // a test sees that the calls decide: PostgreSQL counts no fast-path call in
        // `pg_stat_user_functions`.)
        try admin.executeScript(
            "CREATE OR REPLACE FUNCTION settingsd.unmoved(look text) RETURNS integer LANGUAGE sql AS 'SELECT 7'"
        )
        #expect(try !pollUntilQuiet(hub, &quiet, counter: counter))
        #expect(quiet.callable == second)

        // A NULL answer is no answer either.
        try admin.executeScript(
            "CREATE OR REPLACE FUNCTION settingsd.unmoved(look text) RETURNS integer LANGUAGE sql AS 'SELECT NULL::integer'"
        )
        #expect(try !pollUntilQuiet(hub, &quiet, counter: counter))

        // Eight bytes of answer, which a fast-path call cannot take: the catalog says so, and the
        // link asks no more of it once the call was refused (it is gone) and the number re-read.
        try admin.executeScript(
            "DROP FUNCTION settingsd.unmoved(text); CREATE FUNCTION settingsd.unmoved(look text) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'; GRANT EXECUTE ON FUNCTION settingsd.unmoved(text) TO settingsd_user"
        )
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter), "quiet checks by statement")
        #expect(quiet.function == .unusable)
    }

    @Test(
        "through PgBouncer in transaction pooling the quiet check is a fast-path call too, and what it answers decides"
    )
    func quietCallThroughThePooler() throws {
        guard PgBouncer.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil else {
            return
        }
        let (hub, admin, pooler) = try hub(at: 13, "pooled", pooled: true)
        #expect(try hub.connection.isPooled())
        var quiet = HubQuietCheck()
        let counter = try hub.lastSequence()
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        #expect(quiet.callable != nil)
        try admin.executeScript(
            "CREATE OR REPLACE FUNCTION settingsd.unmoved(look text) RETURNS integer LANGUAGE sql AS 'SELECT 0'"
        )
        #expect(try !pollUntilQuiet(hub, &quiet, counter: counter), "every call said the server moved")
        withExtendedLifetime(pooler) {}
    }

    @Test("a role denied the function checks quietly by statement, and stops calling")
    func deniedFunction() throws {
        let (hub, admin, _) = try hub(at: 13, "denied")
        var quiet = HubQuietCheck()
        let counter = try hub.lastSequence()
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        #expect(quiet.callable != nil)
        try admin.executeScript("REVOKE EXECUTE ON FUNCTION settingsd.unmoved(text) FROM settingsd_user")
        #expect(try pollUntilQuiet(hub, &quiet, counter: counter))
        #expect(quiet.function == .unusable, "a denial is not asked again")
    }

    @Test("a fast-path call to a frozen server process gives up at the stall time-out, as a statement does")
    func frozenCallTimesOut() throws {
        let (_, hub, _) = try namespace("frozen")
        hub.connection.stallTimeout = .seconds(1)
        var quiet = HubQuietCheck()
        #expect(try pollUntilQuiet(hub, &quiet, counter: hub.lastSequence()))
        let backend = try hub.connection.query("SELECT pg_catalog.pg_backend_pid()")
        let pid = try #require(Int32(backend.text(0, 0)))
        #expect(quiet.callable != nil)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let started = Date()
        do {
            _ = try hub.poll(readingLoad: false, quiet: &quiet)
            Issue.record("a poll of a frozen server process returned")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.message.contains("stalled"))
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.9 && waited < 10, "waited \(waited) s")
    }
}
