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
        "PostgreSQL hub: lineage tells copied and restored store files from the replica they copy",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubLineageTests {
        let directory = TemporaryDirectory()

        private func daemon(_ name: String, url: String) throws -> DaemonProcess {
            try DaemonProcess(
                directory, database: directory.file("\(name).sqlite"), arguments: ["--hub", url])
        }

        private func expectSynced(_ daemons: [DaemonProcess]) {
            for daemon in daemons {
                let wait = daemon.cli("sync", "--wait", "--timeout", "40")
                #expect(wait.status == 0, "\(wait.output)\(wait.error)")
            }
        }

        private func keys(_ daemon: DaemonProcess) throws -> Set<String> {
            guard case .object(let members) = try JSONValue.parse(daemon.cli("list", "--json").output) else {
                return []
            }
            return Set(members.keys)
        }

        private func replace(_ destination: String, with source: String) throws {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: destination + suffix)
            }
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        }

        @Test("two live copies of one store file cannot both push under its id: one takes a new id")
        func copiedFileForks() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("lineage_copy")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let original = try daemon("original", url: url)
            #expect(original.cli("set", "shared", "before the copy").status == 0)
            expectSynced([original])
            #expect(original.terminate() == 0)
            try replace(directory.file("copy.sqlite"), with: original.database)
            try original.start()
            let copy = try daemon("copy", url: url)
            #expect(original.cli("set", "from.original", "1").status == 0)
            #expect(copy.cli("set", "from.copy", "2").status == 0)
            expectSynced([original, copy])
            expectSynced([original, copy])
            #expect(try original.status().replica != copy.status().replica)
            for node in [original, copy] {
                #expect(node.cli("get", "from.original").output == "1\n")
                #expect(node.cli("get", "from.copy").output == "2\n")
            }
        }

        @Test("a store file restored from a backup that wrote offline past what it lost is detected")
        func restoredFileWritingOffline() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("lineage_restore")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let (a, b) = (try daemon("a", url: url), try daemon("b", url: url))
            var expected: Set<String> = []
            for index in 0..<5 {
                #expect(a.cli("set", "early.\(index)", "\(index)").status == 0)
                expected.insert("early.\(index)")
            }
            expectSynced([a, b])
            #expect(a.terminate() == 0)
            let backup = directory.file("a-backup.sqlite")
            try replace(backup, with: a.database)
            try a.start()
            let originalID = try a.status().replica
            for index in 0..<10 {
                #expect(a.cli("set", "lost.\(index)", "\(index)").status == 0)
                expected.insert("lost.\(index)")
            }
            expectSynced([a, b])
            #expect(a.terminate() == 0)
            try replace(a.database, with: backup)
            // Offline, the restored file writes more than it lost: its sequence passes the
            // position the hub recorded, which a comparison of numbers alone cannot tell.
            let offline = try Settings(path: a.database)
            for index in 0..<30 {
                try offline.set(Int64(index), forKey: "offline.\(index)")
                expected.insert("offline.\(index)")
            }
            #expect(offline.sequence > 15)
            offline.close()
            try a.start()
            expectSynced([a, b])
            expectSynced([a, b])
            #expect(try a.status().replica != originalID)
            for node in [a, b] {
                let held = try keys(node)
                #expect(held == expected, "\(held.symmetricDifference(expected).sorted())")
            }
        }

        @Test("a push expecting a position another session moved fails whole, and nothing of it lands")
        func positionMovedFailsPush() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("lineage_cas")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let open = { () throws -> HubNamespace in
                try HubNamespace(
                    connection: PostgresConnection(conninfo: url, defaults: [:]), namespace: nil,
                    listens: false)
            }
            let (first, second) = (try open(), try open())
            let replica = ReplicaID.random()
            let version = SettingVersion(timestamp: HybridTimestamp(rawValue: 1 << 20), replica: replica)
            let entry = { (key: String) in
                SettingEntry(key: key, value: .integer(1), version: version, sequence: 1)
            }
            #expect(
                try first.pushedRecord(of: replica)
                    == PushedRecord(sequence: 0, incarnation: nil, isRegistered: false))
            #expect(
                try second.pushedRecord(of: replica)
                    == PushedRecord(sequence: 0, incarnation: nil, isRegistered: false))
            let (one, two) = (UUID(), UUID())
            try first.push([entry("first")], from: replica, through: 1, incarnation: one)
            try first.push([entry("first.again")], from: replica, through: 2, incarnation: one)
            let refusal = #expect(throws: SettingsError.self) {
                try second.push([entry("second")], from: replica, through: 1, incarnation: two)
            }
            #expect(refusal?.code == .replicaForked)
            #expect(try second.pushedRecord(of: replica) == PushedRecord(sequence: 2, incarnation: one))
            let rows = try first.connection.execute(
                "SELECT count(*)::bigint FROM settingsd.entries WHERE namespace = $1 AND key = 'second'",
                [.text(role.name)])
            #expect(rows.int64(0, 0) == 0)
        }
    }
}
