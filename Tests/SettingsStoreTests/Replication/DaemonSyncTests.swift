import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Replica sync between real daemons and embedded stores")
    struct DaemonSyncTests {
        let directory = TemporaryDirectory()

        func waitForEqualDigests(_ daemons: [DaemonProcess]) async throws {
            try await waitUntil(timeout: 60) { Set(try daemons.map { try $0.status().digest }).count == 1 }
        }

        @Test("three daemons in a chain converge, deletes included; sync --wait returns")
        func chainOfDaemons() async throws {
            let a = try DaemonProcess(directory, database: directory.file("a.sqlite"))
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--peer", a.socket])
            let c = try DaemonProcess(
                directory, database: directory.file("c.sqlite"), arguments: ["--peer", b.socket])
            _ = a.cli("set", "from.a", "1")
            _ = c.cli("set", "from.c", "3")
            _ = b.cli("set", "doomed", "x")
            try await waitForEqualDigests([a, b, c])
            _ = a.cli("delete", "doomed")
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
            try await waitForEqualDigests([a, b, c])
            #expect(c.cli("get", "from.a").output == "1\n")
            #expect(a.cli("get", "from.c").output == "3\n")
            #expect(c.cli("get", "doomed").status == 1)
            let status = try b.status()
            #expect(status.peers.count == 2)
            #expect(status.peers.allSatisfy { $0.isConnected })
        }

        @Test(
            "SIGKILL of a daemon in the middle of a sync loses nothing acknowledged, and it converges after restart"
        )
        func killDuringSync() async throws {
            let a = try DaemonProcess(directory, database: directory.file("a.sqlite"))
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--peer", a.socket])
            let writer = try a.client()
            let changes = (0..<3_000).map {
                WireRequest.KeyWrite(key: "bulk.\($0)", value: .integer(Int64($0)))
            }
            for chunk in stride(from: 0, to: changes.count, by: 500) {
                try writer.request(.setMany(changes: Array(changes[chunk..<chunk + 500])))
            }
            b.kill()
            try b.start()
            try await waitForEqualDigests([a, b])
            #expect(b.cli("get", "bulk.2999").output == "2999\n")
        }

        @Test("an app's embedded store works offline, then converges with its daemon")
        func embeddedStore() async throws {
            let socket = "/tmp/sdt-embedded-\(UUID().uuidString.prefix(8)).sock"
            let app = try Settings(path: directory.file("app.sqlite"))
            let link = app.sync(with: socket)
            try app.set("offline edit", forKey: "app.note")
            let daemon = try DaemonProcess(
                directory, database: directory.file("daemon.sqlite"), socket: socket)
            _ = daemon.cli("set", "daemon.note", "from the daemon")
            try await waitUntil(timeout: 60) { app.value(forKey: "daemon.note") == "from the daemon" }
            try await waitUntil(timeout: 60) { try daemon.status().digest == app.digest }
            #expect(daemon.cli("get", "app.note").output == "offline edit\n")
            link.stop()
        }
    }
}
