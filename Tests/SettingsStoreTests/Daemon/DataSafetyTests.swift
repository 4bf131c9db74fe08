import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    /// No command loses or misroutes the user's data: an export never lands on a store, a daemon
    /// whose file was removed or replaced stops acknowledging writes, and `$SETTINGSD_DB` never
    /// sends a command to a daemon that serves another database.
    @Suite("Data safety: no command writes over a store or into the void, or misroutes")
    struct DataSafetyTests {
        let directory = TemporaryDirectory()

        @Test("export onto the live database, its WAL, or a symlink to it is refused; the store is intact")
        func exportNeverLandsOnAStore() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "kept", "1").status == 0)
            let link = directory.file("link.json")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: daemon.database)
            for target in [daemon.database, daemon.database + "-wal", link] {
                let result = daemon.cli("export", target)
                #expect(result.status == 1, "\(target)")
                #expect(result.error.contains("SQLite database"), "\(target): \(result.error)")
            }
            #expect(daemon.terminate() == 0)
            try daemon.start()
            #expect(daemon.cli("get", "kept").output == "1\n")
        }

        @Test("export through a symlink replaces its target and keeps the link")
        func exportThroughSymlink() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "k", "v").status == 0)
            let target = directory.file("backup.json")
            try "old".write(toFile: target, atomically: true, encoding: .utf8)
            let link = directory.file("latest.json")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            #expect(daemon.cli("export", link).status == 0)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
            #expect(try String(contentsOfFile: target, encoding: .utf8).contains("settingsd-export"))
        }

        @Test(
            "a daemon whose database was removed or replaced refuses writes with the reason instead of losing them"
        )
        func fileRemovedOrReplaced() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "before", "1").status == 0)
            try FileManager.default.removeItem(atPath: daemon.database)
            let removed = daemon.cli("set", "lost", "2")
            #expect(removed.status == 1)
            #expect(removed.error.contains("was removed while open"), "\(removed.error)")

            // Another database renamed over a live one, as a careless restore would.
            let replaced = try DaemonProcess(directory, database: directory.file("replaced.sqlite"))
            #expect(replaced.cli("set", "before", "1").status == 0)
            let spare = try Settings(path: directory.file("spare.sqlite"))
            try spare.set("spare", forKey: "s")
            spare.close()
            #expect(rename(directory.file("spare.sqlite"), replaced.database) == 0)
            let refused = replaced.cli("set", "lost", "2")
            #expect(refused.status == 1)
            #expect(refused.error.contains("was replaced by another file"), "\(refused.error)")
        }

        @Test("$SETTINGSD_DB held by one daemon is never served by a daemon of another database")
        func environmentNeverMisroutes() throws {
            let holder = try DaemonProcess(directory, database: directory.file("held.sqlite"))
            let stranger = try DaemonProcess(directory, database: directory.file("stranger.sqlite"))
            var environment = ProcessInfo.processInfo.environment
            environment["SETTINGSD_DB"] = holder.database
            environment["SETTINGSD_SOCKET"] = stranger.socket
            let misrouted = DaemonProcess.run(["set", "k", "v"], environment: environment)
            #expect(misrouted.status == 1)
            #expect(misrouted.error.contains("serves '\(stranger.database)'"), "\(misrouted.error)")
            #expect(stranger.cli("get", "k").status == 1)
            environment["SETTINGSD_SOCKET"] = holder.socket
            #expect(DaemonProcess.run(["set", "k", "v"], environment: environment).status == 0)
            #expect(holder.cli("get", "k").output == "v\n")
        }
    }
}
