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
        "PostgreSQL hub: anti-entropy repairs what numbering cannot see",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubAntiEntropyTests {
        let directory = TemporaryDirectory()

        private func daemon(_ name: String, url: String) throws -> DaemonProcess {
            try DaemonProcess(
                directory, database: directory.file("\(name).sqlite"), arguments: ["--hub", url])
        }

        /// Sets `values` on `daemon` in one import.
        private func write(_ values: [String: SettingValue], to daemon: DaemonProcess) throws {
            let file = directory.file("import-\(UUID().uuidString.prefix(8)).json")
            try ExportDocument(values: values).json.serialized().write(
                toFile: file, atomically: true, encoding: .utf8)
            #expect(daemon.cli("import", file).status == 0)
        }

        private func listed(_ daemon: DaemonProcess) throws -> [String: JSONValue] {
            guard case .object(let members) = try JSONValue.parse(daemon.cli("list", "--json").output) else {
                return [:]
            }
            return members
        }

        /// The namespace's rows with a value, as the superuser sees them.
        private func hubKeys(
            _ cluster: PostgresCluster, namespace: String, database: String = PostgresCluster.database
        ) throws -> Set<String> {
            let connection = try PostgresConnection(
                conninfo: cluster.conninfo(database: database), defaults: [:])
            let rows = try connection.execute(
                "SELECT key FROM settingsd.entries WHERE namespace = $1 AND value IS NOT NULL",
                [.text(namespace)])
            return Set((0..<rows.count).map { rows.text($0, 0) })
        }

        private func expectSynced(_ daemons: [DaemonProcess], timeout: String = "40") {
            for daemon in daemons {
                let wait = daemon.cli("sync", "--wait", "--timeout", timeout)
                #expect(wait.status == 0, "\(wait.output)\(wait.error)")
            }
        }

        @Test("rows deleted, edited or truncated by hand are found and repaired; sync --wait waits for it")
        func handEdits() async throws {
            // A database of its own: the TRUNCATE below empties every namespace in it.
            let cluster = try HubSyncTests.hub()
            let database = try cluster.makeDatabase()
            _ = try HubAdministration.initialize(url: cluster.conninfo(database: database))
            let role = try cluster.makeRole("edits")
            let url = cluster.conninfo(user: role.name, password: role.password, database: database)
            let (a, b) = (try daemon("a", url: url), try daemon("b", url: url))
            var expected: [String: SettingValue] = [:]
            for index in 0..<40 { expected["a.\(index)"] = .integer(Int64(index)) }
            try write(expected, to: a)
            for index in 0..<10 {
                #expect(b.cli("set", "b.\(index)", "v\(index)").status == 0)
                expected["b.\(index)"] = .string("v\(index)")
            }
            expectSynced([a, b])
            #expect(try hubKeys(cluster, namespace: role.name, database: database) == Set(expected.keys))

            try cluster.psql(
                """
                DELETE FROM settingsd.entries WHERE namespace = '\(role.name)' AND key LIKE 'a.1%';
                UPDATE settingsd.entries SET value = '\\x05ff'::bytea WHERE namespace = '\(role.name)' AND key = 'b.3';
                """, database: database)
            #expect(
                try hubKeys(cluster, namespace: role.name, database: database).count == expected.count - 11)
            // No counter moved: only a comparison can notice. sync --wait asks for one first.
            expectSynced([a])
            #expect(try hubKeys(cluster, namespace: role.name, database: database) == Set(expected.keys))
            let fresh = try daemon("fresh", url: url)
            expectSynced([fresh])
            let got = try listed(fresh)
            #expect(Set(got.keys) == Set(expected.keys))
            #expect(got["b.3"] == .string("v3"))

            try cluster.psql("TRUNCATE settingsd.entries", database: database)
            expectSynced([b, a])
            #expect(try hubKeys(cluster, namespace: role.name, database: database) == Set(expected.keys))
            let status = try a.status()
            #expect(status.hubs.first?.agreement == "agreed")
            #expect(a.cli("status").output.contains("repaired"))
        }

        @Test("two daemons on copies of one store file (one replica id) still get each other's writes")
        func copiedStoreFile() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("copied")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let original = try daemon("original", url: url)
            #expect(original.cli("set", "shared", "before the copy").status == 0)
            expectSynced([original])
            #expect(original.terminate() == 0)
            try FileManager.default.copyItem(
                atPath: directory.file("original.sqlite"), toPath: directory.file("copy.sqlite"))
            try original.start()
            let copy = try daemon("copy", url: url)
            #expect(original.cli("set", "from.original", "1").status == 0)
            #expect(copy.cli("set", "from.copy", "2").status == 0)
            expectSynced([original, copy])
            expectSynced([original, copy])
            for node in [original, copy] {
                #expect(node.cli("get", "from.original").output == "1\n")
                #expect(node.cli("get", "from.copy").output == "2\n")
            }
        }

        @Test(
            "a hub restored from an earlier snapshot, or with its counters reset, loses nothing acknowledged")
        func restoredHub() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("restore")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let (a, b) = (try daemon("a", url: url), try daemon("b", url: url))
            var expected: [String: SettingValue] = [:]
            for index in 0..<20 { expected["early.\(index)"] = .integer(Int64(index)) }
            try write(expected, to: a)
            expectSynced([a, b])
            // The "dump": the namespace's rows and counter as they are now.
            let snapshot = "snap_\(role.name)"
            try cluster.psql(
                """
                CREATE TABLE \(snapshot) AS SELECT namespace, key, value, hlc, replica, hub_seq, pushed_by
                    FROM settingsd.entries WHERE namespace = '\(role.name)';
                CREATE TABLE \(snapshot)_seq AS SELECT last_seq FROM settingsd.namespaces WHERE namespace = '\(role.name)';
                """)
            for index in 0..<20 { expected["late.\(index)"] = .integer(Int64(index)) }
            try write(expected.filter { $0.key.hasPrefix("late.") }, to: b)
            #expect(a.cli("delete", "early.0").status == 0)
            expected["early.0"] = nil
            expectSynced([a, b])
            // The restore: the hub goes back to the snapshot, counter included.
            try cluster.psql(
                """
                DELETE FROM settingsd.entries WHERE namespace = '\(role.name)';
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by)
                    SELECT * FROM \(snapshot);
                UPDATE settingsd.namespaces SET last_seq = (SELECT last_seq FROM \(snapshot)_seq)
                    WHERE namespace = '\(role.name)';
                """)
            // New writes after the restore take numbers the daemons' cursors already passed.
            let c = try daemon("c", url: url)
            for index in 0..<5 {
                #expect(c.cli("set", "after.\(index)", "\(index)").status == 0)
                expected["after.\(index)"] = .string("\(index)")
            }
            expectSynced([c, a, b])
            for node in [a, b, c] {
                let got = try listed(node)
                #expect(
                    Set(got.keys) == Set(expected.keys), "\(Set(got.keys).symmetricDifference(expected.keys))"
                )
            }
            #expect(try hubKeys(cluster, namespace: role.name) == Set(expected.keys))

            // The counter row itself removed while daemons run (2 of issue 25): a push it did not
            // number must not count as pushed.
            try cluster.psql("DELETE FROM settingsd.namespaces WHERE namespace = '\(role.name)'")
            for index in 0..<5 {
                #expect(a.cli("set", "orphan.\(index)", "\(index)").status == 0)
                expected["orphan.\(index)"] = .string("\(index)")
            }
            expectSynced([a, b, c])
            for node in [a, b, c] { #expect(Set(try listed(node).keys) == Set(expected.keys)) }
            #expect(try hubKeys(cluster, namespace: role.name) == Set(expected.keys))
            #expect(try b.status().hubs.first?.agreement == "agreed")
        }
    }
}
