import CSQLite
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

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
    /// per key, no key index), each write appending one record, as `set` does.
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

    /// Rows owed to `kv` by records (`recordDeferred`), and how many records since the last fold.
    private var owed: [String: Int64] = [:]
    private var recordsSinceFold = 0

    /// One write as the store makes it (needs `withHistoryLayout()`): its record appended in a
    /// commit of its own, its row left for a fold that every 2,048 records (as in the store) upserts each owed key's
    /// newest value in that commit.
    func setRecordedDeferred(_ key: String, _ value: Int64) {
        owed[key] = value
        recordsSinceFold += 1
        let folding = recordsSinceFold >= 2048
        if folding { exec("BEGIN IMMEDIATE") }
        var bytes: (UInt8, Int64) = (3, value.littleEndian)
        sqlite3_bind_text(record, 1, key, -1, csqlite_transient())
        _ = withUnsafeBytes(of: &bytes) {
            sqlite3_bind_blob(record, 2, $0.baseAddress, 9, csqlite_transient())
        }
        sqlite3_bind_int64(record, 3, value)
        sqlite3_step(record)
        sqlite3_reset(record)
        if folding {
            for (key, value) in owed { set(key, value) }
            exec("COMMIT")
            owed.removeAll(keepingCapacity: true)
            recordsSinceFold = 0
        }
    }

    /// The store's own tables (`docs/STORAGE.md`) in place of `kv`: each write is an upsert of an
    /// entry row and one appended history record, bound as an embedded store binds them.
    static func storeLayout(path: String) -> RawSQLite {
        let raw = RawSQLite(path: path)
        raw.exec(
            """
            CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY NOT NULL, value BLOB, hlc INTEGER NOT NULL,
                replica BLOB NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB,
                previous BLOB, redacted INTEGER NOT NULL DEFAULT 0, hlc INTEGER NOT NULL, replica BLOB NOT NULL,
                reason TEXT NOT NULL, origin BLOB NOT NULL, time_ms INTEGER NOT NULL, uid INTEGER, pid INTEGER,
                exe TEXT, prev_seq INTEGER);
            """)
        sqlite3_finalize(raw.upsert)
        sqlite3_prepare_v2(
            raw.db,
            """
            INSERT INTO entries (key, value, hlc, replica, seq) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (key) DO UPDATE SET
                value = excluded.value, hlc = excluded.hlc, replica = excluded.replica, seq = excluded.seq
            """, -1, &raw.upsert, nil)
        sqlite3_prepare_v2(
            raw.db,
            """
            INSERT INTO history (seq, key, value, previous, redacted, hlc, replica, reason, origin, time_ms,
                uid, pid, exe, prev_seq)
            VALUES (?5, ?1, ?2, NULL, 0, ?3, ?4, 'local', ?4, ?6, ?7, ?8, ?9, NULL)
            """, -1, &raw.record, nil)
        return raw
    }

    /// One write in the store's layout (needs `storeLayout`): the entry and its history record,
    /// inside the caller's transaction.
    func setEntry(_ key: String, _ value: Int64, sequence: Int64) {
        var bytes: (UInt8, Int64) = (3, value.littleEndian)
        let stamp = Int64(1_800_000_000_000) << 16 + sequence
        for statement in [upsert, record] {
            sqlite3_bind_text(statement, 1, key, -1, csqlite_transient())
            _ = withUnsafeBytes(of: &bytes) {
                sqlite3_bind_blob(statement, 2, $0.baseAddress, 9, csqlite_transient())
            }
            sqlite3_bind_int64(statement, 3, stamp)
            _ = Self.replica.withUnsafeBytes {
                sqlite3_bind_blob(statement, 4, $0.baseAddress, 16, csqlite_transient())
            }
            sqlite3_bind_int64(statement, 5, sequence)
        }
        sqlite3_bind_int64(record, 6, 1_800_000_000_000)
        sqlite3_bind_int64(record, 7, 1000)
        sqlite3_bind_int64(record, 8, 4242)
        sqlite3_bind_text(record, 9, "/usr/bin/app", -1, csqlite_transient())
        for statement in [upsert, record] {
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
    }

    private static let replica = (0..<16).map { UInt8($0) }

    /// Runs `sql` on the database at `path`, as a bug or an administrator might behind the
    /// store's back; returns whether SQLite accepted it.
    static func execute(_ sql: String, onFileAt path: String) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { return false }
        defer { sqlite3_close(db) }
        return sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK
    }
}
