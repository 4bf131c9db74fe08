import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Replica sync: restored backups, copied files, misconfigured links")
    struct ForkRecoveryTests {
        let directory = TemporaryDirectory()

        private func waitForAgreement(_ daemons: [DaemonProcess]) async throws {
            do {
                try await waitUntil(timeout: 60) {
                    let statuses = try daemons.map { try $0.status() }
                    return Set(statuses.map(\.digest)).count == 1
                        && statuses.allSatisfy { $0.peers.filter(\.isConnected).allSatisfy(\.agrees) }
                }
            } catch {
                // Say what was left disagreeing: a rare timeout here is otherwise a bare line.
                let statuses = daemons.map { daemon in
                    (try? daemon.status()).map { status in
                        "\(status.replica) digest \(status.digest ?? "none"): "
                            + status.peers.map {
                                "\($0.replica) connected \($0.isConnected) agrees \($0.agrees)"
                            }
                            .joined(separator: "; ")
                    } ?? "no status"
                }
                Issue.record("no agreement in 60 s: \(statuses.joined(separator: " | "))")
                throw error
            }
        }

        private func copyFile(_ source: String, to destination: String) throws {
            try? FileManager.default.removeItem(atPath: destination)
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        }

        @Test("a replica restored from a backup takes a new id and loses nothing either way")
        func restoredBackup() async throws {
            let a = try DaemonProcess(directory, database: directory.file("a.sqlite"))
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--peer", a.socket])
            _ = b.cli("set", "b.before.backup", "1")
            try await waitForAgreement([a, b])
            #expect(b.terminate() == 0)
            let backup = directory.file("b-backup.sqlite")
            try copyFile(b.database, to: backup)
            let originalID = try { () throws -> ReplicaID in
                try b.start()
                return try b.status().replica
            }()
            _ = b.cli("set", "b.after.backup", "2")  // reaches A, then B's copy is lost
            _ = a.cli("set", "a.meanwhile", "3")
            try await waitForAgreement([a, b])
            #expect(b.terminate() == 0)
            try copyFile(backup, to: b.database)
            try b.start()
            _ = b.cli("set", "b.after.restore", "4")  // reuses sequence numbers A has already seen
            try await waitForAgreement([a, b])
            for daemon in [a, b] {
                #expect(daemon.cli("get", "b.before.backup").output == "1\n")
                #expect(daemon.cli("get", "b.after.backup").output == "2\n")
                #expect(daemon.cli("get", "a.meanwhile").output == "3\n")
                #expect(daemon.cli("get", "b.after.restore").output == "4\n")
            }
            #expect(try b.status().replica != originalID)
        }

        @Test("a copied database file run as a second replica: one takes a new id, everything converges")
        func copiedFile() async throws {
            let hub = try DaemonProcess(directory, database: directory.file("hub.sqlite"))
            do {
                let original = try DaemonProcess(directory, database: directory.file("one.sqlite"))
                _ = original.cli("set", "shared.before.copy", "x")
                #expect(original.terminate() == 0)
            }
            try copyFile(directory.file("one.sqlite"), to: directory.file("two.sqlite"))
            let one = try DaemonProcess(
                directory, database: directory.file("one.sqlite"), arguments: ["--peer", hub.socket])
            let two = try DaemonProcess(
                directory, database: directory.file("two.sqlite"), arguments: ["--peer", hub.socket])
            _ = one.cli("set", "from.one", "1")
            _ = two.cli("set", "from.two", "2")
            _ = one.cli("set", "same.key", "one")
            try await waitForAgreement([hub, one, two])
            #expect(try one.status().replica != two.status().replica)
            for daemon in [hub, one, two] {
                #expect(daemon.cli("get", "shared.before.copy").output == "x\n")
                #expect(daemon.cli("get", "from.one").output == "1\n")
                #expect(daemon.cli("get", "from.two").output == "2\n")
            }
        }

        @Test("a damaged row in a daemon's file is found by anti-entropy, repaired, then agreed")
        func damagedRow() async throws {
            let a = try DaemonProcess(directory, database: directory.file("a.sqlite"))
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--peer", a.socket])
            for index in 0..<50 { _ = a.cli("set", "key.\(index)", "\(index)") }
            try await waitForAgreement([a, b])
            #expect(b.terminate() == 0)
            try runSQLite(b.database, "DELETE FROM entries WHERE key = 'key.7'")
            try b.start()
            try await waitForAgreement([a, b])
            #expect(b.cli("get", "key.7").output == "7\n")
            let repaired = try a.status().peers.map(\.repairedKeys) + b.status().peers.map(\.repairedKeys)
            #expect(repaired.reduce(0, +) >= 1)
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test("a link to itself shows why in status, and the daemon keeps serving")
        func linkToItself() async throws {
            let socket = "/tmp/sdt-self-\(UUID().uuidString.prefix(8)).sock"
            let daemon = try DaemonProcess(directory, socket: socket, arguments: ["--peer", socket])
            try await waitUntil(timeout: 60) {
                try daemon.status().links.first?.lastError?.contains("cannot sync with itself") == true
            }
            let output = daemon.cli("status").output
            #expect(output.contains("link \(socket): connecting"), "\(output)")
            #expect(output.contains("cannot sync with itself"), "\(output)")
            #expect(daemon.cli("set", "still", "serving").status == 0)
        }
    }
}
