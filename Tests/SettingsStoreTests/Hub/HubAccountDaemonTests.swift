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
        "PostgreSQL hub: daemons that change accounts keep what they acknowledged, and their socket peers follow",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubAccountDaemonTests {
        let directory = TemporaryDirectory()

        /// A login role that is a member of two namespaces, and its URL.
        private func person(_ cluster: PostgresCluster) throws -> (url: String, fleets: [String]) {
            let person = try cluster.makeRole("dmover")
            let fleets = ["one", "two"].map { "fleet\($0)_\(person.name)" }
            try cluster.psql(
                fleets.map { "CREATE ROLE \($0) NOLOGIN; GRANT \($0) TO \(person.name);" }.joined())
            return (cluster.conninfo(user: person.name, password: person.password), fleets)
        }

        private func daemon(_ name: String, url: String, namespace: String, socket: String? = nil)
            throws -> DaemonProcess
        {
            try DaemonProcess(
                directory, database: directory.file("\(name).sqlite"), socket: socket,
                arguments: ["--hub", url, "--hub-namespace", namespace])
        }

        private func keys(_ daemon: DaemonProcess) -> Set<String> {
            Set(daemon.cli("list", "--keys").output.split(separator: "\n").map(String.init))
        }

        @Test(
            "a daemon restarted on another namespace while PostgreSQL is down keeps every write it acknowledges"
        )
        func restartOnAnotherNamespaceWithTheHubDown() async throws {
            let cluster = try PostgresCluster.makePrivate()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            let (url, fleets) = try person(cluster)
            let first = try daemon("mover", url: url, namespace: fleets[0])
            #expect(first.cli("set", "old.key", "one").status == 0)
            #expect(first.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(first.terminate() == 0)

            try cluster.stop()
            let moved = try daemon("mover", url: url, namespace: fleets[1], socket: first.socket)
            for index in 0..<5 { #expect(moved.cli("set", "offline.\(index)", "\(index)").status == 0) }
            #expect(moved.cli("delete", "offline.4").status == 0)
            try cluster.start()
            #expect(moved.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(keys(moved) == ["offline.0", "offline.1", "offline.2", "offline.3"])
            let status = moved.cli("status").output
            #expect(status.contains("moved from hub namespace \(fleets[0]) to \(fleets[1])"), "\(status)")

            // Another machine on fleet two sees the offline writes, and the delete.
            let other = try daemon("other", url: url, namespace: fleets[1])
            #expect(other.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(keys(other) == ["offline.0", "offline.1", "offline.2", "offline.3"])
        }

        @Test(
            "a socket leaf follows its daemon's account change: the old account's keys leave it, and both agree"
        )
        func leafFollowsTheAccountChange() async throws {
            let cluster = try HubSyncTests.hub()
            let (url, fleets) = try person(cluster)
            let seeder = try daemon("seeder", url: url, namespace: fleets[1])
            #expect(seeder.cli("set", "fleet.two", "2").status == 0)
            #expect(seeder.cli("sync", "--wait", "--timeout", "30").status == 0)

            let relay = try daemon("relay", url: url, namespace: fleets[0])
            let leaf = try DaemonProcess(
                directory, database: directory.file("leaf.sqlite"), arguments: ["--peer", relay.socket])
            for index in 0..<16 { #expect(relay.cli("set", "fleet.one.\(index)", "\(index)").status == 0) }
            #expect(relay.cli("delete", "fleet.one.15").status == 0)
            #expect(leaf.cli("set", "leaf.before", "x").status == 0)
            #expect(relay.cli("sync", "--wait", "--timeout", "30").status == 0)
            try await waitUntil(timeout: 30) { keys(leaf).count == 16 }

            #expect(relay.terminate() == 0)
            let moved = try daemon("relay", url: url, namespace: fleets[1], socket: relay.socket)
            try await waitUntil(timeout: 60) { keys(leaf) == ["fleet.two"] }
            #expect(leaf.cli("set", "leaf.after", "y").status == 0)
            #expect(leaf.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(moved.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(keys(leaf) == ["fleet.two", "leaf.after"])
            #expect(keys(moved) == ["fleet.two", "leaf.after"])
            #expect(try leaf.status().digest == moved.status().digest)
            #expect(seeder.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(keys(seeder) == ["fleet.two", "leaf.after"])
        }

        @Test("two daemons held to different namespaces by their hub links refuse to sync, and say why")
        func differentAccountsRefuse() async throws {
            let cluster = try HubSyncTests.hub()
            let (url, fleets) = try person(cluster)
            let one = try daemon("one", url: url, namespace: fleets[0])
            #expect(one.cli("set", "only.one", "1").status == 0)
            #expect(one.cli("sync", "--wait", "--timeout", "30").status == 0)
            let two = try DaemonProcess(
                directory, database: directory.file("two.sqlite"),
                arguments: ["--hub", url, "--hub-namespace", fleets[1], "--peer", one.socket])
            #expect(two.cli("set", "only.two", "2").status == 0)
            try await waitUntil(timeout: 30) {
                try two.status().links.first?.lastError?.contains("not syncing across accounts") == true
            }
            #expect(keys(one) == ["only.one"])
            #expect(keys(two) == ["only.two"])
        }
    }
}
