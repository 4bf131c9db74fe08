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
        "PostgreSQL hub: one tenant cannot stop another's pushes or stall its pulls",
        .enabled(
            if: PostgresCluster.testsEnabled
                && (PgBouncer.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil),
            "needs PostgreSQL and PgBouncer (apt-get install postgresql pgbouncer)")
    )
    struct HubTenantTests {
        private static let admin = (name: "postgres", password: "admin-pw")

        @Test(
            "a member who packs the shared batch in a transaction she keeps open stalls nobody's pull, through PgBouncer"
        )
        func heldBatchStallsNobody() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("tenant")
            let pooler = try PgBouncer(cluster: cluster, users: [role, Self.admin])
            let url = pooler.conninfo(user: role.name, password: role.password)
            let writer = Settings(inMemoryWith: .init())
            let reader = Settings(inMemoryWith: .init())
            let writerLink = try writer.sync(
                withHub: HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.milliseconds(500))))
            defer { writerLink.stop() }
            var readerLink = try reader.sync(
                withHub: HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.milliseconds(500))))
            try writer.set(1, forKey: "first")
            try await waitUntil(timeout: 30) { reader.value(forKey: "first") == 1 }
            readerLink.stop()

            // While the reader is away, a write moves the counter past the reader's cursor.
            let direct = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password))
            let hub = try HubNamespace(connection: direct, namespace: nil, listens: false)
            let cursor = try hub.lastSequence()
            try writer.set(2, forKey: "second")
            try await waitUntil(timeout: 30) { try hub.lastSequence() > cursor }
            // The tenant packs the batch every machine at that cursor asks for, and keeps her
            // transaction open.
            try direct.execute("BEGIN")
            _ = try hub.pull(after: cursor, for: .random(), limits: reader.configuration.limits)
            defer { _ = try? direct.execute("ROLLBACK") }

            readerLink = try reader.sync(
                withHub: HubConfiguration(url: url, pollInterval: .milliseconds(50)...(.milliseconds(500))))
            defer { readerLink.stop() }
            let started = Date()
            try await waitUntil(timeout: 30) { reader.value(forKey: "second") == 2 }
            #expect(Date().timeIntervalSince(started) < 5, "the pull waited on the tenant's transaction")
        }

        @Test("pushes land and sync goes on when notifying the listeners fails (a full notification queue)")
        func notificationFailureFailsNoPush() async throws {
            let cluster = try PostgresCluster.makePrivate()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            let role = try cluster.makeRole("noisy")
            let url = cluster.conninfo(user: role.name, password: role.password)
            // What PostgreSQL answers when the queue is full, which any login role can cause by
            // listening in a transaction it keeps open while notifications pile up.
            try cluster.psql(
                """
                CREATE OR REPLACE FUNCTION settingsd.notify(ns name) RETURNS void LANGUAGE plpgsql
                    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                    AS $$ BEGIN RAISE EXCEPTION 'too many notifications in the NOTIFY queue'; END $$;
                """)
            let writer = Settings(inMemoryWith: .init())
            let reader = Settings(inMemoryWith: .init())
            let writerLink = try writer.sync(withHub: HubConfiguration(url: url))
            defer { writerLink.stop() }
            let readerLink = try reader.sync(
                withHub: HubConfiguration(
                    url: url, pooling: .transaction, pollInterval: .milliseconds(50)...(.milliseconds(500))))
            defer { readerLink.stop() }
            for index in 0..<10 { try writer.set(index, forKey: "key.\(index)") }
            try await waitUntil(timeout: 30) { reader.value(forKey: "key.9") == 9 }
            #expect(writerLink.status.pendingUp == 0)
            #expect(writerLink.status.lastError == nil)
        }
    }
}
