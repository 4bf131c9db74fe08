import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("A socket peer whose disk is full refuses batches and says why")
    struct FullDiskPeerTests {
        let directory = TemporaryDirectory()

        /// Fills the file system holding `folder` with a file of its own, to the last byte.
        private func fill(_ folder: String) throws -> String {
            let path = folder + "/filler"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            let block = [UInt8](repeating: 0xA5, count: 4096)
            while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            // The last partial block.
            while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, 1) }) > 0 {}
            return path
        }

        @Test(
            "the full side keeps the session, both sides name the reason, sync --wait fails saying so, and everything arrives once there is room",
            .enabled(if: Capabilities.canMountTmpfs, "needs to mount a tmpfs"))
        func fullPeerRefusesAndRecovers() async throws {
            let mountPoint = directory.file("small")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=2m") == 0)
            defer { umount(mountPoint) }
            let sender = try DaemonProcess(directory, database: directory.file("sender.sqlite"))
            let full = try DaemonProcess(
                directory, database: mountPoint + "/full.sqlite", arguments: ["--peer", sender.socket])
            #expect(sender.cli("set", "before", "1").status == 0)
            #expect(full.cli("sync", "--wait", "--timeout", "30").status == 0)
            let filler = try fill(mountPoint)

            let value = String(repeating: "v", count: 4_000)
            for index in 0..<20 { #expect(sender.cli("set", "big.\(index)", value).status == 0) }
            try await waitUntil(timeout: 30) {
                try full.status().peers.first?.lastError?.contains("disk full") == true
                    && sender.status().peers.first?.lastError?.contains("disk full") == true
            }
            let senderWait = sender.cli("sync", "--wait", "--timeout", "2")
            #expect(senderWait.status == 1)
            #expect(senderWait.error.contains("disk full"), "\(senderWait.error)")
            let fullWait = full.cli("sync", "--wait", "--timeout", "2")
            #expect(fullWait.status == 1)
            #expect(fullWait.error.contains("disk full"), "\(fullWait.error)")
            // The link stayed up: no reconnect storm.
            let link = try #require(try full.status().links.first)
            #expect(link.state == "syncing")
            #expect(link.failures == 0)
            #expect(try full.status().peers.first?.isConnected == true)

            try FileManager.default.removeItem(atPath: filler)
            #expect(full.cli("sync", "--wait", "--timeout", "60").status == 0)
            #expect(sender.cli("sync", "--wait", "--timeout", "60").status == 0)
            for index in 0..<20 { #expect(full.cli("get", "big.\(index)").output == value + "\n") }
            #expect(try full.status().peers.first?.lastError == nil)
            #expect(try full.status().digest == sender.status().digest)
        }
    }
}
