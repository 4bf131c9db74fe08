import Foundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Under locks, list, export, import, reset and revert agree with get and with the docs")
    struct LockedStoreOperationsTests {
        @Test(
            "A backup made anywhere restores on a managed machine; whole-store operations skip locked keys, naming them"
        )
        func backupAndWholeStoreOperationsUnderLocks() async throws {
            let directory = TemporaryDirectory()
            let unmanaged = try DaemonProcess(directory, database: directory.file("home.sqlite"))
            for (key, value) in [("ui.theme", "dark"), ("ui.font", "big"), ("app.x", "1")] {
                #expect(unmanaged.cli("set", key, value).status == 0)
            }
            let backup = directory.file("backup.json")
            #expect(unmanaged.cli("export", backup).status == 0)

            let system = try SystemFolder(directory, defaults: ["10-site.json": #"{"ui.theme": "light"}"#])
            let managed = try DaemonProcess(
                directory, database: directory.file("work.sqlite"), arguments: ["--system-dir", system.path])
            #expect(managed.cli("import", backup).status == 0)  // before the lock: ui.theme is stored
            let before = UInt64(Date().timeIntervalSince1970 * 1000)
            try await Task.sleep(for: .milliseconds(5))
            #expect(managed.cli("set", "ui.font", "small").status == 0)
            #expect(managed.cli("set", "ui.theme", "blue").status == 0)
            try system.write(
                defaults: ["10-site.json": #"{"ui.theme": "light"}"#], locks: ["ui": "ui.theme\n"])
            try await waitUntil { managed.cli("get", "ui.theme").output == "light\n" }

            // list shows what get shows, and says the key is locked.
            #expect(
                managed.cli("list", "ui.").output == "ui.font = \"small\"\nui.theme = \"light\"  (locked)\n")
            #expect(managed.cli("list", "ui.", "--json").output.contains("\"ui.theme\":\"light\""))
            // The backup restores: the locked key is left to its lock and named.
            let restored = managed.cli("import", backup)
            #expect(restored.status == 0, "\(restored.error)")
            #expect(restored.error.contains("skipped 1 locked key(s)") && restored.error.contains("ui.theme"))
            #expect(managed.cli("get", "ui.font").output == "big\n")
            // revert and reset of a prefix skip the locked key instead of failing on it.
            #expect(managed.cli("set", "ui.font", "tiny").status == 0)
            let reverted = managed.cli("revert", "ui.", "--before", String(Double(before) / 1000))
            #expect(reverted.status == 0, "\(reverted.error)")
            #expect(managed.cli("get", "ui.font").output == "big\n")
            let reset = managed.cli("reset", "ui.")
            #expect(reset.status == 0, "\(reset.error)")
            #expect(reset.error.contains("skipped 1 locked key(s)"), "\(reset.error)")
            #expect(managed.cli("get", "ui.font").status == 1)
            // One locked key named on its own is still refused.
            #expect(managed.cli("reset", "ui.theme").error.contains("locked"))
            #expect(managed.cli("get", "app.x").output == "1\n")
        }
    }
}
