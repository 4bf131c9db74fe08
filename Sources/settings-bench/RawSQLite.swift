import CSQLite

/// The floor: upserts written directly against libsqlite3, with the pragmas the store uses.
final class RawSQLite {
    private var db: OpaquePointer?
    private var upsert: OpaquePointer?
    private var record: OpaquePointer?

    /// `synchronous` FULL fsyncs every commit, as the store's `--durability full` does.
    init(path: String, synchronous: String = "NORMAL") {
        sqlite3_open(path, &db)
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = \(synchronous)")
        exec("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID")
        sqlite3_prepare_v2(
            db,
            "INSERT INTO kv (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            -1, &upsert, nil)
    }

    deinit {
        sqlite3_finalize(upsert)
        sqlite3_finalize(record)
        sqlite3_close(db)
    }

    func exec(_ sql: String) {
        sqlite3_exec(db, sql, nil, nil, nil)
    }

    /// One upsert of a 9-byte value (what an integer setting takes), in its own transaction unless inside `exec("BEGIN")`.
    func set(_ key: String, _ value: Int64) {
        var bytes: (UInt8, Int64) = (3, value.littleEndian)
        sqlite3_bind_text(upsert, 1, key, -1, csqlite_transient())
        _ = withUnsafeBytes(of: &bytes) {
            sqlite3_bind_blob(upsert, 2, $0.baseAddress, 9, csqlite_transient())
        }
        sqlite3_step(upsert)
        sqlite3_reset(upsert)
    }

    /// Adds the store's history layout beside `kv`: a table appended in sequence order (chained
    /// per key, no key index), each upsert then also appending one record, as `set` does.
    func withHistoryLayout() -> RawSQLite {
        exec(
            """
            CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB,
                previous BLOB, reason TEXT NOT NULL, time_ms INTEGER NOT NULL, prev_seq INTEGER);
            """)
        sqlite3_prepare_v2(
            db,
            "INSERT INTO history (key, value, previous, reason, time_ms) VALUES (?1, ?2, ?2, 'local', ?3)",
            -1,
            &record, nil)
        return self
    }

    /// One upsert and its history record in one transaction (needs `withHistoryLayout()`).
    func setRecorded(_ key: String, _ value: Int64) {
        exec("BEGIN IMMEDIATE")
        set(key, value)
        var bytes: (UInt8, Int64) = (3, value.littleEndian)
        sqlite3_bind_text(record, 1, key, -1, csqlite_transient())
        _ = withUnsafeBytes(of: &bytes) {
            sqlite3_bind_blob(record, 2, $0.baseAddress, 9, csqlite_transient())
        }
        sqlite3_bind_int64(record, 3, value)
        sqlite3_step(record)
        sqlite3_reset(record)
        exec("COMMIT")
    }

    /// Runs `sql` on the database at `path`, as a bug or an administrator might behind the
    /// store's back; returns whether SQLite accepted it.
    static func execute(_ sql: String, onFileAt path: String) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { return false }
        defer { sqlite3_close(db) }
        return sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK
    }
}
