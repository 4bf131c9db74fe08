import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Bad files and hostile environments", .serialized)
    struct BadFileTests {
        let directory = TemporaryDirectory()

        func makeDatabase(keys: Int = 2_000) throws -> Data {
            do {
                let settings = try Settings(path: directory.database)
                try settings.transaction { transaction in
                    for index in 0..<keys {
                        try transaction.set(String(repeating: "v", count: 100), forKey: "key.\(index)")
                    }
                }
            }
            return try Data(contentsOf: URL(fileURLWithPath: directory.database))
        }

        @Test("a truncated database gives a clear error and is left as it was")
        func truncated() throws {
            let original = try makeDatabase()
            let truncated = original.prefix(original.count / 2)
            try truncated.write(to: URL(fileURLWithPath: directory.database))
            let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
            #expect(error?.code == .corruptDatabase)
            #expect(error?.message.contains(directory.database) == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory.database)) == truncated)
        }

        @Test("a database with garbage over its pages gives a clear error and is left as it was")
        func corrupt() throws {
            var bytes = try makeDatabase()
            var generator = SeededGenerator(seed: 7)
            for index in 4096..<bytes.count where index % 7 == 0 {
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            try bytes.write(to: URL(fileURLWithPath: directory.database))
            let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
            #expect(error?.code == .corruptDatabase)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory.database)) == bytes)
        }

        @Test("the daemon refuses a corrupt database in one line and exits 1")
        func daemonOnCorruptFile() throws {
            try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: directory.database))
            let result = DaemonProcess.run([
                "run", "--db", directory.database, "--socket", directory.file("s.sock"),
            ])
            #expect(result.status == 1)
            #expect(
                result.error.hasPrefix(
                    "Error: '\(directory.database)' is not a SQLite database, so not a settings store"))
        }

        @Test(
            "a read-only folder gives a readOnly error naming the path",
            .enabled(if: Capabilities.canMountTmpfs, "needs to mount a tmpfs"))
        func readOnlyFolder() throws {
            let mountPoint = directory.file("readonly")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try #require(mount("tmpfs", mountPoint, "tmpfs", UInt(MS_RDONLY), "size=64k") == 0)
            defer { umount(mountPoint) }
            let error = #expect(throws: SettingsError.self) {
                try Settings(path: mountPoint + "/settings.sqlite")
            }
            #expect(error?.code == .readOnly)
            #expect(error?.message.contains(mountPoint) == true)
        }

        @Test(
            "a full disk refuses the write that does not fit and keeps everything acknowledged",
            .enabled(if: Capabilities.canMountTmpfs, "needs to mount a tmpfs"))
        func fullDisk() throws {
            let mountPoint = directory.file("small")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=1m") == 0)
            defer { umount(mountPoint) }
            let path = mountPoint + "/settings.sqlite"
            var acknowledged = 0
            var failure: SettingsError?
            do {
                let settings = try Settings(path: path)
                let value = String(repeating: "x", count: 4_000)
                for index in 0..<1_000 {
                    do {
                        try settings.set(value, forKey: "fill.\(index)")
                        acknowledged = index + 1
                    } catch {
                        failure = error
                        break
                    }
                }
                #expect(failure?.code == .diskFull || failure?.code == .io, "\(String(describing: failure))")
                #expect(settings.keys().count == acknowledged)
            }
            let reopened = try Settings(path: path)
            #expect(reopened.keys().count == acknowledged)
            #expect(acknowledged > 10)
        }
    }
}

extension SyncReliability {
    @Suite("Permissions")
    struct PermissionTests {
        let directory = TemporaryDirectory()

        @Test("the socket is 0600 in a 0700 folder the daemon creates")
        func socketModes() throws {
            let folder = "/tmp/sdt-perm-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let daemon = try DaemonProcess(directory, socket: folder + "/settingsd.sock")
            let socketMode =
                try FileManager.default.attributesOfItem(atPath: daemon.socket)[.posixPermissions] as? Int
            let folderMode =
                try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
            #expect(socketMode == 0o600)
            #expect(folderMode == 0o700)
            let databaseMode =
                try FileManager.default.attributesOfItem(atPath: daemon.database)[.posixPermissions] as? Int
            #expect(databaseMode == 0o600)
        }

        @Test("a socket folder owned by another user is refused", .enabled(if: getuid() == 0))
        func foreignSocketFolder() throws {
            let folder = "/tmp/sdt-foreign-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            chown(folder, 65534, 65534)
            let result = DaemonProcess.run([
                "run", "--db", directory.database, "--socket", folder + "/s.sock",
            ])
            #expect(result.status == 1)
            #expect(result.error.contains("belongs to uid 65534"))
        }
    }
}
