import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Checkpoints run beside the commits, not in them", .timeLimit(.minutes(1)))
struct CheckpointTests {
    let directory = TemporaryDirectory()

    /// A connection in WAL mode to `name` in the test's folder, with a table of blobs.
    private func connection(_ name: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: directory.file(name))
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)")
        return connection
    }

    /// Commits about 4 MiB (twice the pages that ask for a checkpoint), 64 rows a transaction.
    private func fill(_ connection: SQLiteConnection) throws {
        let insert = try connection.prepare("INSERT INTO blobs (id, body) VALUES (?1, randomblob(1024))")
        for start in stride(from: 0, to: 4_096, by: 64) {
            try connection.transaction { () throws(SettingsError) in
                for id in start..<start + 64 {
                    try insert.bind(Int64(id), at: 1)
                    try insert.run()
                }
            }
        }
    }

    private func size(_ name: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: directory.file(name)))?[.size] as? Int) ?? 0
    }

    @Test("the log reaches the database file through the checkpointer's own connection")
    func checkpointsInTheBackground() async throws {
        // Without a checkpointer, and SQLite's own checkpoints off, nothing leaves the log.
        let alone = try connection("alone.sqlite")
        try alone.execute("PRAGMA wal_autocheckpoint = 0")
        try fill(alone)
        #expect(size("alone.sqlite") < 1 << 20, "\(size("alone.sqlite")) bytes")

        let main = try connection("checkpointed.sqlite")
        let checkpointer = try WALCheckpointer(path: directory.file("checkpointed.sqlite"))
        checkpointer.attach(to: main)
        try fill(main)
        try await waitUntil { size("checkpointed.sqlite") > 2 << 20 }
        // The writer starts the log over once it is copied: it does not grow with every write.
        for _ in 0..<4 {
            try main.execute("DELETE FROM blobs")
            try fill(main)
        }
        // Bounded by the pages at which the writer checkpoints itself (and one fill beyond).
        #expect(size("checkpointed.sqlite-wal") < 24 << 20, "\(size("checkpointed.sqlite-wal")) bytes")
        checkpointer.stop(detaching: main)
        #expect(try main.scalar("SELECT count(*) FROM blobs") == 4_096)
    }

    @Test("a store closed while checkpoints are queued keeps every write")
    func closingWithCheckpointsQueued() throws {
        let path = directory.database
        for round in 0..<3 {
            let settings = try Settings(path: path)
            try settings.transaction { transaction in
                for index in 0..<2_000 {
                    try transaction.set(
                        String(repeating: "v", count: 1_000), forKey: "round\(round).key\(index)")
                }
            }
            settings.close()
        }
        let reopened = try Settings(path: path)
        #expect(reopened.keys(withPrefix: "round").count == 6_000)
    }
}
