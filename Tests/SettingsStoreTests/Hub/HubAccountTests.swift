import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsStore

extension HubReliability {
    @Suite(
        "PostgreSQL hub: moving to another namespace is an account change",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubAccountTests {
        /// A login role that is a member of two namespaces, and its URL.
        private func person(_ cluster: PostgresCluster) throws -> (url: String, fleets: [String]) {
            let person = try cluster.makeRole("mover")
            let fleets = ["one", "two"].map { "fleet\($0)_\(person.name)" }
            try cluster.psql(
                fleets.map { "CREATE ROLE \($0) NOLOGIN; GRANT \($0) TO \(person.name);" }.joined())
            return (cluster.conninfo(user: person.name, password: person.password), fleets)
        }

        /// The keys of `namespace`'s rows, tombstones included, as the superuser sees them.
        private func hubKeys(_ cluster: PostgresCluster, _ namespace: String) throws -> Set<String> {
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT key FROM settingsd.entries WHERE namespace = $1", [.text(namespace)])
            return Set((0..<rows.count).map { rows.text($0, 0) })
        }

        private func settled(_ link: HubLink, _ store: Settings) async throws {
            store.replicator.verifyHubs()
            try await waitUntil(timeout: 30) {
                let status = link.status
                return status.isConnected && status.pendingUp == 0 && status.pendingDown == 0
                    && status.agreement == "agreed"
            }
        }

        private func keys(_ store: Settings) -> Set<String> {
            Set(store.keys())
        }

        @Test(
            "the synced keys are replaced whatever their versions, local keys stay, observers and the history hear accountChange, and nothing crosses namespaces"
        )
        func namespaceSwitch() async throws {
            let cluster = try HubSyncTests.hub()
            let (url, fleets) = try person(cluster)
            let policy = try SettingsPolicy.load(schemaDirectories: [], systemDirectory: nil)
            let local = "system.proxy.http.host"
            #expect(policy.isLocal(local))

            let other = Settings(inMemoryWith: .init())
            let otherLink = try other.replicator.sync(
                withHub: HubConfiguration(url: url, namespace: fleets[1]))
            defer { otherLink.stop() }
            try other.set("from fleet two", forKey: "common")
            try other.set("two", forKey: "b.only")
            try await settled(otherLink, other)

            let directory = TemporaryDirectory()
            let mover = try Settings(path: directory.file("mover.sqlite"))
            mover.apply(policy)
            // Written after fleet two's, so the higher version: an ordinary merge would keep it.
            try mover.set("from fleet one", forKey: "common")
            try mover.set("one", forKey: "a.only")
            try mover.set("proxy.example", forKey: local)
            let first = try mover.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[0]))
            try await settled(first, mover)
            first.stop()
            #expect(try hubKeys(cluster, fleets[0]) == ["common", "a.only"])

            // A socket peer of the mover that still holds a write of the old account.
            let peer = Settings(inMemoryWith: .init())
            try peer.set("old account", forKey: "peer.before")

            let recorder = EventRecorder()
            let token = mover.observe(.all, handler: recorder.handler)
            defer { token.cancel() }
            let second = try mover.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[1]))
            defer { second.stop() }
            try await waitUntil(timeout: 30) { mover.value(forKey: "common") == "from fleet two" }
            try await settled(second, mover)
            #expect(keys(mover) == ["common", "b.only", local])
            #expect(mover.value(forKey: local) == "proxy.example")
            let change = recorder.all.first { $0.reason == .accountChange }
            #expect(Set(change?.keys ?? []) == ["common", "a.only", "b.only"])
            // A key the change deleted has no entry left to walk back from: the store's history lists it.
            let recent = try mover.history(HistoryQuery(limit: 20))
            #expect(recent.contains { $0.key == "a.only" && $0.value == nil && $0.reason == "accountChange" })
            #expect(try mover.history(for: "common").first?.reason == "accountChange")
            #expect(second.status.lastAccountChange?.contains(fleets[1]) == true)
            // Nothing of fleet one reached fleet two, not even a tombstone.
            #expect(try hubKeys(cluster, fleets[1]) == ["common", "b.only"])

            // The peer's write from before the change is refused; one made after it travels.
            let link = InProcessLink(mover, peer)
            defer { link.disconnect() }
            try await waitUntil(timeout: 60) { peer.value(forKey: "b.only") == "two" }
            try peer.set("new account", forKey: "peer.after")
            try await waitUntil(timeout: 60) { mover.value(forKey: "peer.after") == "new account" }
            try await settled(second, mover)
            #expect(mover.value(forKey: "peer.before") == nil)
            #expect(try hubKeys(cluster, fleets[1]) == ["common", "b.only", "peer.after"])
            #expect(other.value(forKey: "peer.before") == nil)

            // And back: fleet one's contents return, and fleet two's stay in fleet two.
            second.stop()
            link.disconnect()
            let third = try mover.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[0]))
            defer { third.stop() }
            try await waitUntil(timeout: 30) { mover.value(forKey: "common") == "from fleet one" }
            try await settled(third, mover)
            #expect(keys(mover) == ["common", "a.only", local])
            #expect(try hubKeys(cluster, fleets[0]) == ["common", "a.only"])
        }

        @Test("the account survives a restart: the store reopened on the same namespace merges as before")
        func accountIsDurable() async throws {
            let cluster = try HubSyncTests.hub()
            let (url, fleets) = try person(cluster)
            let directory = TemporaryDirectory()
            let path = directory.file("store.sqlite")
            do {
                let store = try Settings(path: path)
                try store.set(1, forKey: "kept")
                let link = try store.replicator.sync(
                    withHub: HubConfiguration(url: url, namespace: fleets[0]))
                try await settled(link, store)
                link.stop()
                store.close()
            }
            let reopened = try Settings(path: path)
            #expect(reopened.account?.namespace == fleets[0])
            try reopened.set(2, forKey: "offline")
            let link = try reopened.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[0]))
            defer { link.stop() }
            try await settled(link, reopened)
            #expect(keys(reopened) == ["kept", "offline"])
            #expect(link.status.lastAccountChange == nil)
            #expect(try hubKeys(cluster, fleets[0]) == ["kept", "offline"])
        }
    }
}
