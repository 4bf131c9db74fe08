import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore
@testable import SettingsWire

extension TransportReliability {
    @Suite("A synced folder through two real Syncthing instances", .enabled(if: SyncthingPair.isAvailable))
    struct SyncthingFolderTests {
        let directory = TemporaryDirectory()

        @Test(
            "two daemons on a Syncthing folder converge after concurrent writes on both, and Syncthing makes no conflict copy"
        )
        func converge() async throws {
            let syncthing = try SyncthingPair()
            let a = try DaemonProcess(
                directory, database: directory.file("a.sqlite"),
                arguments: ["--folder", syncthing.folders[0]])
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"),
                arguments: ["--folder", syncthing.folders[1]])
            for round in 0..<5 {
                let changes = (0..<40).map {
                    WireRequest.KeyWrite(key: "shared.\($0)", value: .integer(Int64(round)))
                }
                try a.client().request(.setMany(changes: changes))
                try b.client().request(
                    .setMany(changes: changes.map { .init(key: $0.key, value: .integer(Int64(100 + round))) })
                )
                _ = a.cli("set", "from.a.\(round)", "a")
                _ = b.cli("set", "from.b.\(round)", "b")
            }
            _ = a.cli("delete", "from.a.0")
            do {
                try await waitUntil(timeout: 120) {
                    let (statusA, statusB) = (try a.status(), try b.status())
                    return statusA.digest == statusB.digest && b.cli("get", "from.a.4").output == "a\n"
                        && a.cli("get", "from.b.4").output == "b\n" && b.cli("get", "from.a.0").status == 1
                }
            } catch {
                Issue.record("not converged: \(syncthing.log.suffix(3_000))")
                throw error
            }
            #expect(a.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(syncthing.conflictCopies.isEmpty, "\(syncthing.conflictCopies)")
            let folder = try #require(try a.status().folders.first)
            #expect(folder.replicas.count == 1)
            #expect(folder.lastError == nil)
        }
    }
}
