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
        "PostgreSQL hub: daemons, restarts and crashes of the hub",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubDaemonTests {
        let directory = TemporaryDirectory()

        private func daemons(_ count: Int, url: String) throws -> [DaemonProcess] {
            try (0..<count).map { index in
                try DaemonProcess(
                    directory, database: directory.file("d\(index).sqlite"), arguments: ["--hub", url])
            }
        }

        private func waitForEqualDigests(_ daemons: [DaemonProcess], timeout: Double = 30) async throws {
            try await waitUntil(timeout: timeout) {
                Set(try daemons.map { try $0.status().digest }).count == 1
            }
        }

        @Test(
            "three daemons on one hub converge: sets, deletes, concurrent writes; sync --wait covers the hub")
        func threeDaemons() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("trio")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let nodes = try daemons(3, url: url)
            _ = nodes[0].cli("set", "from.zero", "0")
            _ = nodes[1].cli("set", "doomed", "x")
            try await waitForEqualDigests(nodes)
            _ = nodes[2].cli("delete", "doomed")
            for (index, node) in nodes.enumerated() { _ = node.cli("set", "contended", "node \(index)") }
            try await waitForEqualDigests(nodes)
            let winner = nodes[0].cli("get", "contended").output
            for node in nodes {
                #expect(node.cli("get", "from.zero").output == "0\n")
                #expect(node.cli("get", "doomed").status == 1)
                #expect(node.cli("get", "contended").output == winner)
                #expect(node.cli("sync", "--wait", "--timeout", "30").status == 0)
            }
            let status = try nodes[0].status()
            #expect(status.hubs.first?.isConnected == true)
            #expect(status.hubs.first?.namespace == role.name)
            let printed = nodes[0].cli("status").output
            #expect(printed.contains("hub user=\(role.name)"), "\(printed)")
            #expect(!printed.contains(role.password))
        }

        @Test("the newest rows lost from a daemon's file: it writes on, repairs, and sync --wait passes")
        func newestRowsLost() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("lostrows")
            let nodes = try daemons(2, url: cluster.conninfo(user: role.name, password: role.password))
            for index in 0..<5 { _ = nodes[0].cli("set", "key.\(index)", "\(index)") }
            #expect(nodes[0].cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(nodes[0].terminate() == 0)
            try runSQLite(nodes[0].database, "DELETE FROM entries WHERE seq >= 4")
            try nodes[0].start()
            #expect(nodes[0].cli("set", "after", "1").status == 0)
            try await waitForEqualDigests(nodes)
            #expect(nodes[0].cli("get", "key.4").output == "4\n")
            #expect(nodes[1].cli("get", "after").output == "1\n")
            #expect(nodes[0].cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test("a daemon offline while others write catches up exactly")
        func offlineCatchUp() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("away")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let nodes = try daemons(2, url: url)
            _ = nodes[0].cli("set", "before", "1")
            try await waitForEqualDigests(nodes)
            #expect(nodes[1].terminate() == 0)
            let writer = try nodes[0].client()
            let changes = (0..<500).map {
                WireRequest.KeyWrite(key: "bulk.\($0)", value: .integer(Int64($0)))
            }
            try writer.request(.setMany(changes: changes))
            try writer.request(.delete(key: "before"))
            try nodes[1].start()
            try await waitForEqualDigests(nodes)
            #expect(nodes[1].cli("get", "bulk.499").output == "499\n")
            #expect(nodes[1].cli("get", "before").status == 1)
        }

        @Test("the hub restarted and SIGKILLed mid-stream loses nothing acknowledged")
        func hubCrashes() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("crash")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let nodes = try daemons(2, url: url)
            let writer = try nodes[0].client()
            var acknowledged = 0
            for round in 0..<3 {
                for index in 0..<100 {
                    try writer.request(.set(key: "k.\(round).\(index)", value: .integer(Int64(index))))
                    acknowledged += 1
                }
                switch round {
                case 0: try cluster.stop()
                case 1: try cluster.killPostmaster()
                default: break
                }
                // Local writes go on while the hub is down.
                try writer.request(.set(key: "while.down.\(round)", value: .bool(true)))
                acknowledged += 1
                if round < 2 { try cluster.start() }
            }
            try await waitForEqualDigests(nodes, timeout: 60)
            let keys = try nodes[1].client().request(.list(prefix: "", includeValues: false))
            guard case .array(let listed)? = keys["keys"] else {
                Issue.record("no key list")
                return
            }
            #expect(listed.count == acknowledged)
        }

        @Test("a daemon with --hub and --peer relays between the hub and its socket peers")
        func relay() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("relay")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let bridge = try DaemonProcess(
                directory, database: directory.file("bridge.sqlite"), arguments: ["--hub", url])
            let local = try DaemonProcess(
                directory, database: directory.file("local.sqlite"), arguments: ["--peer", bridge.socket])
            let remote = try DaemonProcess(
                directory, database: directory.file("remote.sqlite"), arguments: ["--hub", url])
            _ = local.cli("set", "from.local", "socket side")
            _ = remote.cli("set", "from.remote", "hub side")
            try await waitForEqualDigests([bridge, local, remote])
            #expect(remote.cli("get", "from.local").output == "socket side\n")
            #expect(local.cli("get", "from.remote").output == "hub side\n")
        }
    }
}
