import Foundation
import PostgresFixture
import Testing

@testable import SettingsStore

/// Hub tests run against a private PostgreSQL cluster (`PostgresCluster`).
extension Reliability {
    @Suite(
        "PostgreSQL hub: stores converge through a namespace",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubSyncTests {
        /// The cluster with the hub schema in place.
        static func hub() throws -> PostgresCluster {
            let cluster = try PostgresCluster.shared()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            return cluster
        }

        @Test("two embedded stores on one namespace converge: sets, deletes, concurrent writes")
        func embeddedStoresConverge() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("alice")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let hubA = try a.sync(withHub: HubConfiguration(url: url))
            let hubB = try b.sync(withHub: HubConfiguration(url: url))
            defer {
                hubA.stop()
                hubB.stop()
            }
            try a.set("dark", forKey: "ui.theme")
            try await waitUntil { b.value(forKey: "ui.theme") == "dark" }
            try b.removeValue(forKey: "ui.theme")
            try await waitUntil { a.value(forKey: "ui.theme") == nil }
            try a.set("from a", forKey: "k")
            try b.set("from b", forKey: "k")
            try await waitForConvergence([a, b])
            #expect(a.value(forKey: "k") == b.value(forKey: "k"))
            #expect(hubA.status.isConnected)
            #expect(hubA.status.namespace == role.name)
            #expect(hubA.status.mode == "listen")
            #expect(!hubA.status.address.contains(role.password))
        }
    }
}
