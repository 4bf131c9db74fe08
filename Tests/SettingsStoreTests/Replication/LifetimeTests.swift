import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    /// Everything a user can create stops when released, connected or not, and lets its store go:
    /// nothing keeps running, syncing or holding a database file behind the user's back.
    @Suite("Servers, links and clients stop when released")
    struct LifetimeTests {
        let directory = TemporaryDirectory()

        /// Opens `path` again once the store that held it is gone (its file lock released).
        private func reopen(_ path: String) async throws -> Settings {
            var reopened: Settings?
            try await waitUntil(timeout: 10) {
                reopened = try? Settings(path: path)
                return reopened != nil
            }
            return try #require(reopened)
        }

        @Test(
            "a server released after start without stop stops serving; the next client is refused, not a crash"
        )
        func releasedServer() async throws {
            let socket = "/tmp/sdt-released-\(UUID().uuidString.prefix(8)).sock"
            let settings = Settings(inMemoryWith: .init())
            var server: SettingsServer? = try SettingsServer(
                settings: settings, configuration: ServerConfiguration(socketPath: socket))
            try server?.start()
            let client = try BlockingClient(socketPath: socket, timeout: 5)
            _ = try client.request(.set(key: "k", value: "v"))
            server = nil
            #expect(throws: SettingsError.self) { try BlockingClient(socketPath: socket, timeout: 1) }
            #expect(!FileManager.default.fileExists(atPath: socket))
            #expect(settings.value(forKey: "k") == "v")
        }

        @Test("a replica link released while connected disconnects, and its store's file can be opened again")
        func releasedReplicaLink() async throws {
            let daemon = try DaemonProcess(directory, database: directory.file("daemon.sqlite"))
            let path = directory.file("app.sqlite")
            var app: Settings? = try Settings(path: path)
            var link: ReplicaLink? = app?.sync(with: daemon.socket)
            try await waitUntil(timeout: 60) { link?.isConnected == true }
            try app?.set("before", forKey: "app.note")
            try await waitUntil(timeout: 60) { daemon.cli("get", "app.note").output == "before\n" }
            link = nil
            try await waitUntil(timeout: 60) { try daemon.status().peers.allSatisfy { !$0.isConnected } }
            app = nil
            let reopened = try await reopen(path)
            try reopened.set("after", forKey: "app.note")
            // Nothing of the released link still syncs the file's new owner.
            #expect(daemon.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(daemon.cli("get", "app.note").output == "before\n")
        }

        @Test("a replicator released with its links stops relaying; a link keeps its replicator alive")
        func linkKeepsItsReplicator() async throws {
            let daemon = try DaemonProcess(directory, database: directory.file("daemon.sqlite"))
            let app = Settings(inMemoryWith: .init())
            // No reference to the replicator is kept: the link must keep it, or commits stop travelling.
            let link = Replicator(settings: app).sync(with: daemon.socket)
            try await waitUntil(timeout: 60) { link.isConnected }
            try app.set("travels", forKey: "live.key")
            try await waitUntil(timeout: 60) { daemon.cli("get", "live.key").output == "travels\n" }
            link.stop()
        }

        @Test("a client released while watching closes its connection")
        func releasedClient() async throws {
            let daemon = try DaemonProcess(directory, database: directory.file("daemon.sqlite"))
            var client: SettingsClient? = try await SettingsClient.connect(to: daemon.socket)
            let stream = try await client?.watch(.all)
            #expect(stream != nil)
            try await waitUntil(timeout: 10) { try daemon.status().watches == 1 }
            client = nil
            try await waitUntil(timeout: 10) { try daemon.status().watches == 0 }
        }

        @Test(
            "a hub link released while connected stops, and its store's file can be opened again",
            .enabled(
                if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
        )
        func releasedHubLink() async throws {
            let cluster = try HubReliability.HubSyncTests.hub()
            let role = try cluster.makeRole("lifetime")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let path = directory.file("hub-app.sqlite")
            var app: Settings? = try Settings(path: path)
            var replicator: Replicator? = app.map { Replicator(settings: $0) }
            var link: HubLink? = try replicator?.sync(withHub: HubConfiguration(url: url))
            try await waitUntil(timeout: 60) { link?.status.isConnected == true }
            #expect(replicator?.hubs.count == 1)
            link = nil
            #expect(replicator?.hubs.isEmpty == true)
            replicator = nil
            app = nil
            _ = try await reopen(path)
        }
    }
}
