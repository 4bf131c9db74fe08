import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Database files: ownership, corruption, schema", .timeLimit(.minutes(2)))
struct DatabaseFileTests {
    let directory = TemporaryDirectory()

    @Test("a second store on the same file is refused, naming the file and the holder")
    func secondStoreIsRefused() throws {
        let first = try Settings(path: directory.database)
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.code == .databaseInUse)
        #expect(error?.message.contains(directory.database) == true)
        #expect(error?.message.contains("pid \(getpid())") == true)
        first.close()
        _ = try Settings(path: directory.database)
    }

    @Test("another process holding the file is named by pid, and its death releases the file")
    func otherProcessHolds() async throws {
        _ = try Settings(path: directory.database).close()
        let lockFile = directory.database + ".lock"
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Write the pid like a store does, then hold the flock until killed.
        holder.arguments = [
            "-c", "exec 9>>'\(lockFile)'; flock -x 9; echo $$ > '\(lockFile)'; echo held; exec sleep 60",
        ]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        _ = output.fileHandleForReading.availableData  // Blocks until the holder says "held".
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.message.contains("process \(holder.processIdentifier)") == true)
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        _ = try Settings(path: directory.database)
    }

    @Test("a file that is not SQLite gives a clear error and is left untouched")
    func notADatabase() throws {
        let garbage = Data("this is a plain text file, not a database, and it is long enough".utf8)
        try garbage.write(to: URL(fileURLWithPath: directory.database))
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.code == .corruptDatabase)
        #expect(error?.message.contains(directory.database) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.database)) == garbage)
    }

    @Test("a SQLite database of another application is refused")
    func foreignDatabase() throws {
        try runSQLite(directory.database, "CREATE TABLE contacts (name TEXT);")
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.code == .corruptDatabase)
        #expect(error?.message.contains("another application") == true)
    }

    @Test("a database from a newer schema is refused, not downgraded")
    func newerSchema() throws {
        _ = try Settings(path: directory.database).close()
        try runSQLite(directory.database, "PRAGMA user_version = 99;")
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.code == .unsupportedSchema)
    }

    @Test("a damaged stored value is reported with its key")
    func damagedValue() throws {
        do {
            let settings = try Settings(path: directory.database)
            try settings.set(1, forKey: "broken")
        }
        try runSQLite(directory.database, "UPDATE entries SET value = x'FF' WHERE key = 'broken';")
        let error = #expect(throws: SettingsError.self) { try Settings(path: directory.database) }
        #expect(error?.code == .corruptDatabase)
        #expect(error?.key == "broken")
    }

    @Test(
        "rows holding the newest sequence numbers vanish from the file: new changes still number after them")
    func newestRowsVanish() throws {
        do {
            let settings = try Settings(path: directory.database)
            for index in 0..<5 { try settings.set(index, forKey: "key.\(index)") }
            #expect(settings.sequence == 5)
        }
        try runSQLite(directory.database, "DELETE FROM entries WHERE seq >= 4;")
        let settings = try Settings(path: directory.database)
        // A number given out again would collide in the history, and a peer whose cursor is past
        // it would never receive the change.
        #expect(settings.sequence == 5)
        try settings.set("after", forKey: "key.9")
        #expect(settings.entry(forKey: "key.9")?.sequence == 6)
        #expect(try settings.history(for: "key.9", limit: 1).count == 1)
    }
}
