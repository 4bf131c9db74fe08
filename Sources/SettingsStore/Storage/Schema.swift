/// The settings database schema, as ordered migrations (see `docs/STORAGE.md`).
///
/// `entries` has one row per key, updated in place, and no secondary index: the sequence order
/// that catch-up needs is rebuilt in memory when the store opens, so a write touches one B-tree.
/// With history, a commit appends its records (in sequence order, chained per key) and leaves
/// the rows for a fold that writes many commits' rows at once (`DeferredEntries`).
enum Schema {
    /// `SETT` in ASCII, stamped into the file so foreign SQLite files are recognised.
    static let applicationID: Int64 = 0x5345_5454

    static let migrator = SQLiteMigrator(
        applicationID: applicationID,
        migrations: [
            .init(
                version: 1,
                sql: """
                    CREATE TABLE meta (
                        name TEXT PRIMARY KEY NOT NULL,
                        value BLOB
                    ) WITHOUT ROWID;
                    CREATE TABLE entries (
                        key TEXT PRIMARY KEY NOT NULL,
                        value BLOB,
                        hlc INTEGER NOT NULL,
                        replica BLOB NOT NULL,
                        seq INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE peers (
                        replica BLOB PRIMARY KEY NOT NULL,
                        received_seq INTEGER NOT NULL DEFAULT 0,
                        acknowledged_seq INTEGER NOT NULL DEFAULT 0,
                        last_contact_ms INTEGER
                    ) WITHOUT ROWID;
                    """
            ),
            .init(
                version: 2,
                sql: """
                    CREATE TABLE incarnations (
                        ordinal INTEGER PRIMARY KEY,
                        id BLOB NOT NULL,
                        start_seq INTEGER NOT NULL,
                        opened_ms INTEGER NOT NULL
                    );
                    ALTER TABLE peers ADD COLUMN incarnation BLOB;
                    """
            ),
            .init(
                version: 3,
                sql: """
                    CREATE TABLE history (
                        seq INTEGER PRIMARY KEY,
                        key TEXT NOT NULL,
                        value BLOB,
                        previous BLOB,
                        redacted INTEGER NOT NULL DEFAULT 0,
                        hlc INTEGER NOT NULL,
                        replica BLOB NOT NULL,
                        reason TEXT NOT NULL,
                        origin BLOB NOT NULL,
                        time_ms INTEGER NOT NULL,
                        uid INTEGER,
                        pid INTEGER,
                        exe TEXT
                    );
                    CREATE INDEX history_by_key ON history (key, seq);
                    """
            ),
            .init(
                // Each record points at the key's record before it, so a key's history is a
                // chain walked from its entry's sequence number, and the key index (a second
                // B-tree leaf written by every commit) goes.
                version: 4,
                sql: """
                    ALTER TABLE history ADD COLUMN prev_seq INTEGER;
                    UPDATE history SET prev_seq = (
                        SELECT max(earlier.seq) FROM history AS earlier
                        WHERE earlier.key = history.key AND earlier.seq < history.seq);
                    DROP INDEX history_by_key;
                    """
            ),
            .init(
                // A commit with history may leave its entry's row for a later fold
                // (`DeferredEntries`): every record up to `folded_seq` is reflected in `entries`,
                // and those after it are read back when the file opens. Before version 5 every
                // row was written with its record.
                version: 5,
                sql: """
                    INSERT OR REPLACE INTO meta (name, value)
                        VALUES ('folded_seq', (SELECT coalesce(max(seq), 0) FROM history));
                    """
            ),
            .init(
                // A peer's acknowledgements were never stored: what it has is learnt from it.
                version: 6,
                sql: "ALTER TABLE peers DROP COLUMN acknowledged_seq"
            ),
        ]
    )
}
