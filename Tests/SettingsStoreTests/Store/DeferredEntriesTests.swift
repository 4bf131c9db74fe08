import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite(
    "Deferred entries: a commit with history writes its record, folds write the rows", .timeLimit(.minutes(2))
)
struct DeferredEntriesTests {
    let directory = TemporaryDirectory()

    private func count(_ table: String, in path: String) throws -> Int {
        Int(try querySQLite(path, "SELECT count(*) FROM \(table)")) ?? -1
    }

    private func folded(in path: String) throws -> Int64 {
        Int64(try querySQLite(path, "SELECT value FROM meta WHERE name = 'folded_seq'")) ?? -1
    }

    /// The database and its WAL as they are on disk now, in another folder: what a crash leaves.
    private func crashImage(of path: String, to folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let copy = folder + "/settings.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        return copy
    }

    @Test("single sets leave their rows owed until the store closes, which folds them")
    func closingFolds() throws {
        let settings = try Settings(path: directory.database)
        for index in 0..<10 { try settings.set(index, forKey: "k.\(index)") }
        #expect(try count("history", in: directory.database) == 10)
        #expect(try count("entries", in: directory.database) == 0)
        #expect(try folded(in: directory.database) == 0)
        settings.close()
        #expect(try count("entries", in: directory.database) == 10)
        #expect(try folded(in: directory.database) == 10)
    }

    @Test("every fold threshold of records, a commit writes the rows owed, each key's newest")
    func foldsEveryThreshold() throws {
        let settings = try Settings(path: directory.database)
        let threshold = DeferredEntries.foldThreshold
        for index in 0..<threshold - 1 { try settings.set(index, forKey: "k.\(index % 100)") }
        #expect(try count("entries", in: directory.database) == 0)
        try settings.set(-1, forKey: "k.last")
        #expect(try count("entries", in: directory.database) == 101)
        #expect(try folded(in: directory.database) == Int64(threshold))
        let newest = threshold - 2
        #expect(
            try querySQLite(
                directory.database, "SELECT hex(value) FROM entries WHERE key = 'k.\(newest % 100)'")
                == SettingValue.integer(Int64(newest)).encoded().map { String(format: "%02X", $0) }.joined())
        settings.close()
    }

    @Test("large values fold once their bytes pass the limit, long before the record count does")
    func largeValuesFold() throws {
        let settings = try Settings(path: directory.database)
        let value = String(repeating: "x", count: 100_000)
        let needed = DeferredEntries.foldBytes / value.utf8.count + 1
        for index in 0..<needed - 1 { try settings.set(value, forKey: "big.\(index)") }
        #expect(try count("entries", in: directory.database) == 0)
        try settings.set(value, forKey: "big.last")
        #expect(try count("entries", in: directory.database) == needed)
        #expect(try folded(in: directory.database) == Int64(needed))
        settings.close()
    }

    @Test("a commit of more than the deferred maximum writes its rows at once, with every row owed before it")
    func largeCommitFolds() throws {
        let settings = try Settings(path: directory.database)
        let largest = DeferredEntries.largestDeferredCommit
        for index in 0..<3 { try settings.set(index, forKey: "early.\(index)") }
        try settings.transaction { transaction in
            for index in 0..<largest { try transaction.set(index, forKey: "small.\(index)") }
        }
        #expect(try count("entries", in: directory.database) == 0)
        try settings.transaction { transaction in
            for index in 0..<largest { try transaction.set(index, forKey: "bulk.\(index)") }
            try transaction.set("newer", forKey: "early.0")
        }
        #expect(try count("entries", in: directory.database) == 2 * largest + 3)
        #expect(try folded(in: directory.database) == Int64(2 * largest + 4))
        // The row the commit wrote is not overwritten by the one owed from before it.
        let row = try querySQLite(directory.database, "SELECT hex(value) FROM entries WHERE key = 'early.0'")
        #expect(row == SettingValue.string("newer").encoded().map { String(format: "%02X", $0) }.joined())
        settings.close()
        #expect(try Settings(path: directory.database).value(forKey: "early.0") == "newer")
    }

    @Test("a large commit writes rows and records many to a statement, each as one at a time would")
    func largeCommitsWriteManyRowsPerStatement() throws {
        let settings = try Settings(path: directory.database)
        try settings.set("before", forKey: "chained")
        // Not a multiple of the rows a statement takes, so the last ones go one at a time.
        let keys = 3 * SQLiteConnection.rowsPerStatement + 7 + DeferredEntries.largestDeferredCommit
        try settings.transaction { transaction in
            for index in 0..<keys { try transaction.set("v\(index)", forKey: "many.\(index)") }
            try transaction.set("after", forKey: "chained")
        }
        // Deletions many to a statement too: tombstone rows, records with the value before.
        try settings.transaction { transaction in
            for index in stride(from: 0, to: keys, by: 2) {
                try transaction.removeValue(forKey: "many.\(index)")
            }
        }
        settings.close()
        let reopened = try Settings(path: directory.database)
        for index in 0..<keys {
            #expect(reopened.value(forKey: "many.\(index)") == (index % 2 == 0 ? nil : .string("v\(index)")))
        }
        let deleted = try reopened.history(for: "many.10")
        #expect(deleted.map(\.value) == [nil, .string("v10")])
        #expect(deleted.first?.previous == .string("v10"))
        #expect(try reopened.history(for: "chained").map(\.value) == [.string("after"), .string("before")])
        #expect(try reopened.history(for: "chained").first?.previous == .string("before"))
        #expect(try count("entries", in: directory.database) == keys + 1)
        let records = keys + (keys + 1) / 2 + 2
        #expect(
            try querySQLite(directory.database, "SELECT count(DISTINCT seq) FROM history") == String(records))
        #expect(
            try querySQLite(directory.database, "SELECT count(*) FROM history WHERE prev_seq IS NOT NULL")
                == String((keys + 1) / 2 + 1))
    }

    @Test("after a crash every acknowledged write is read back from its record, for readers and writers")
    func crashImageOpens() throws {
        var configuration = SettingsConfiguration()
        configuration.policy.schema = try .secret("account.token")
        let settings = try Settings(path: directory.database, configuration: configuration)
        try settings.set("light", forKey: "ui.theme")
        try settings.set("dark", forKey: "ui.theme")
        try settings.set(0.5, forKey: "audio.volume")
        try settings.removeValue(forKey: "audio.volume")
        try settings.set("hunter2", forKey: "account.token")
        try settings.set(["a", "b"], forKey: "recent")
        #expect(try count("entries", in: directory.database) == 1)  // the secret key's, written directly
        let image = try crashImage(of: directory.database, to: directory.file("crash"))
        let keys = ["ui.theme", "audio.volume", "account.token", "recent"]
        let expected = keys.map { settings.entry(forKey: $0) }
        #expect(!expected.contains(nil))

        var reading = SettingsConfiguration()
        reading.isReadOnly = true
        let reader = try Settings(path: image, configuration: reading)
        #expect(keys.map { reader.entry(forKey: $0) } == expected)
        #expect(reader.digest == settings.digest)
        #expect(reader.sequence == settings.sequence)
        #expect(reader.value(forKey: "account.token") == "hunter2")
        reader.close()

        let reopened = try Settings(path: image, configuration: configuration)
        #expect(keys.map { reopened.entry(forKey: $0) } == expected)
        #expect(reopened.digest == settings.digest)
        #expect(reopened.value(forKey: "audio.volume") == nil)
        #expect(try count("entries", in: image) == 4)  // folded when it opened
        #expect(try reopened.history(for: "ui.theme").map(\.value) == ["dark", "light"])
        try reopened.set("system", forKey: "ui.theme")
        #expect(try reopened.history(for: "ui.theme").map(\.value) == ["system", "dark", "light"])
        reopened.close()
        settings.close()
    }

    @Test("a key made secret after its row was deferred keeps the value written after")
    func secretAfterDeferred() throws {
        let settings = try Settings(path: directory.database)
        try settings.set("first", forKey: "account.token")
        var policy = SettingsPolicy()
        policy.schema = try .secret("account.token")
        settings.apply(policy)
        try settings.set("second", forKey: "account.token")
        let image = try crashImage(of: directory.database, to: directory.file("crash"))
        let reopened = try Settings(path: image)
        #expect(reopened.value(forKey: "account.token") == "second")
        reopened.close()
        settings.close()
        #expect(try Settings(path: directory.database).value(forKey: "account.token") == "second")
    }

    @Test("a version 4 file, every row written with its record, opens with all of its records reflected")
    func migratesVersion4() throws {
        do {
            let settings = try Settings(path: directory.database)
            for index in 0..<20 { try settings.set(index, forKey: "k.\(index % 5)") }
            settings.close()
        }
        try runSQLite(
            directory.database,
            "DELETE FROM meta WHERE name = 'folded_seq'; ALTER TABLE peers ADD COLUMN acknowledged_seq INTEGER NOT NULL DEFAULT 0; PRAGMA user_version = 4;"
        )
        let reopened = try Settings(path: directory.database)
        #expect(try folded(in: directory.database) == 20)
        #expect(reopened.value(forKey: "k.4") == 19)
        #expect(
            try querySQLite(directory.database, "PRAGMA user_version")
                == "\(Schema.migrator.migrations.count)")
        reopened.close()
    }
}
