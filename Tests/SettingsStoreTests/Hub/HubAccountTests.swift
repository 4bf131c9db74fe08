import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

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
            "an account change clears the old account's synced keys as the link starts, local keys stay, observers and the history hear accountChange, and nothing crosses namespaces"
        )
        func namespaceSwitch() async throws {
            let cluster = try HubSyncTests.hub()
            let (url, fleets) = try person(cluster)
            let policy = try SettingsPolicy.load(
                schemaDirectories: [], systemDirectory: nil, extensions: .gnome)
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
            // A socket peer of the mover that follows it on fleet one and writes there.
            let peer = Settings(inMemoryWith: .init())
            var link = InProcessLink(mover, peer)
            try await waitUntil(timeout: 60) { peer.value(forKey: "a.only") == "one" }
            try peer.set("old account", forKey: "peer.before")
            try await waitUntil(timeout: 60) { mover.value(forKey: "peer.before") == "old account" }
            try await settled(first, mover)
            first.stop()
            #expect(try hubKeys(cluster, fleets[0]) == ["common", "a.only", "peer.before"])

            let recorder = EventRecorder()
            let token = mover.observe(.all, handler: recorder.handler)
            defer { token.cancel() }
            let second = try mover.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[1]))
            defer { second.stop() }
            // The change is made as the link starts: nothing of fleet one is left to take a write.
            #expect(keys(mover) == [local])
            #expect(mover.account?.namespace == fleets[1])
            try await waitUntil(timeout: 30) { mover.value(forKey: "common") == "from fleet two" }
            try await settled(second, mover)
            #expect(keys(mover) == ["common", "b.only", local])
            #expect(mover.value(forKey: local) == "proxy.example")
            let change = recorder.all.first { $0.reason == .accountChange }
            #expect(Set(change?.keys ?? []) == ["common", "a.only", "peer.before"])
            // A key the change deleted has no entry left to walk back from: the store's history lists it.
            let recent = try mover.history(HistoryQuery(limit: 20))
            #expect(recent.contains { $0.key == "a.only" && $0.value == nil && $0.reason == "accountChange" })
            #expect(second.status.lastAccountChange?.contains(fleets[1]) == true)
            // Nothing of fleet one reached fleet two, not even a tombstone.
            #expect(try hubKeys(cluster, fleets[1]) == ["common", "b.only"])

            // The peer follows the account change when it meets the mover again: its keys of the
            // old account go, one written after the change travels.
            link = InProcessLink(mover, peer)
            defer { link.disconnect() }
            try await waitUntil(timeout: 60) { peer.value(forKey: "b.only") == "two" }
            #expect(peer.account?.namespace == fleets[1])
            #expect(Set(peer.keys()) == ["common", "b.only"])
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
            #expect(keys(mover) == ["common", "a.only", "peer.before", local])
            #expect(try hubKeys(cluster, fleets[0]) == ["common", "a.only", "peer.before"])
        }

        @Test(
            "writes and deletes acknowledged right after an account change belong to the new account, with the hub down and up",
            arguments: [false, true])
        func writesAfterTheChangeAreKept(hubIsDown: Bool) async throws {
            let cluster = try PostgresCluster.makePrivate()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            let (url, fleets) = try person(cluster)
            // Fleet two already holds a key that the moved store writes and deletes after the change.
            let other = Settings(inMemoryWith: .init())
            do {
                let link = try other.replicator.sync(
                    withHub: HubConfiguration(url: url, namespace: fleets[1]))
                try other.set("two", forKey: "doomed")
                try await settled(link, other)
                link.stop()
            }
            let directory = TemporaryDirectory()
            let store = try Settings(path: directory.file("store.sqlite"))
            do {
                try store.set("one", forKey: "old")
                let link = try store.replicator.sync(
                    withHub: HubConfiguration(url: url, namespace: fleets[0]))
                try await settled(link, store)
                link.stop()
            }
            if hubIsDown { try cluster.stop() }
            let link = try store.replicator.sync(withHub: HubConfiguration(url: url, namespace: fleets[1]))
            defer { link.stop() }
            for index in 0..<5 { try store.set(index, forKey: "new.\(index)") }
            try store.set("moved", forKey: "doomed")
            try store.removeValue(forKey: "doomed")
            if hubIsDown {
                #expect(link.status.isConnected == false)
                try cluster.start()
            }
            try await settled(link, store)
            #expect(keys(store) == Set((0..<5).map { "new.\($0)" }))
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT key, (value IS NULL)::int::bigint FROM settingsd.entries WHERE namespace = $1",
                [.text(fleets[1])])
            let hub = Dictionary(
                uniqueKeysWithValues: (0..<rows.count).map { (rows.text($0, 0), rows.int64($0, 1)) })
            #expect(hub.filter { $0.value == 0 }.keys.sorted() == (0..<5).map { "new.\($0)" })
            #expect(hub["doomed"] == 1, "the acknowledged delete reached the hub: \(hub)")
            #expect(hub["old"] == nil)
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
