import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore
@testable import SettingsWire

extension TransportReliability {
    @Suite("Daemons syncing through one folder")
    struct FolderDaemonTests {
        let directory = TemporaryDirectory()

        @Test(
            "a daemon SIGKILLed while it writes loses nothing it acknowledged; both converge, and status and sync --wait say so"
        )
        func killWhileWriting() async throws {
            let folder = directory.file("Sync")
            let a = try DaemonProcess(
                directory, database: directory.file("a.sqlite"), arguments: ["--folder", folder])
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--folder", folder])
            let writer = try a.client()
            var acknowledged = 0
            for chunk in 0..<6 {
                let changes = (0..<500).map {
                    WireRequest.KeyWrite(key: "bulk.\(chunk * 500 + $0)", value: .integer(Int64(chunk)))
                }
                try writer.request(.setMany(changes: changes))
                acknowledged += 500
                if chunk == 3 {
                    a.kill()
                    break
                }
            }
            try a.start()
            _ = b.cli("set", "from.b", "b")
            try await waitUntil(timeout: 60) {
                try a.status().digest == b.status().digest && a.cli("get", "from.b").output == "b\n"
            }
            #expect(b.cli("get", "bulk.\(acknowledged - 1)").output == "3\n")
            #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
            // The restarted daemon's state file reaches the folder in its own time: B reads it, then agrees.
            try await waitUntil(timeout: 30) { b.cli("status").output.contains("agreed") }
            let status = b.cli("status").output
            #expect(
                status.contains("folder \(folder): watching, 0 change(s) to write, 1 other replica(s)"),
                "\(status)")
        }
    }
}
