import SettingsStore

/// What the bridge last saw agree between dconf and the store, per dconf key: the base of its
/// three-way comparison (`BridgeDecision`). Kept beside the database (`DATABASE-dconf`), so a
/// restarted daemon tells a change made in dconf while it was down from one the store received.
///
/// A state is written after the change it records has happened on both sides; lost, it is
/// rebuilt by the next comparison, so the file needs no transaction with the store or dconf.
final class BridgedStates {
    /// Every recorded key: its canonical value (`BridgeDecision.canonical`), or nil for "absent".
    private(set) var states: [String: String?] = [:]
    private let connection: SQLiteConnection?
    private let upsert: SQLiteStatement?

    /// The states recorded at `path`, created if missing; in memory only when `path` is nil.
    ///
    /// - Throws: `SettingsError` naming the file when it cannot be opened or read.
    package init(path: String?) throws(SettingsError) {
        guard let path else {
            connection = nil
            upsert = nil
            return
        }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        try Self.adoptUnversioned(connection)
        try Self.migrator.check(connection)
        try Self.migrator.migrate(connection)
        let select = try connection.prepare("SELECT path, value FROM bridged")
        while try select.step() {
            states[select.string(at: 0)] = select.isNull(at: 1) ? String?.none : select.string(at: 1)
        }
        self.connection = connection
        upsert = try connection.prepare("INSERT OR REPLACE INTO bridged (path, value) VALUES (?1, ?2)")
    }

    /// The file's schema, as ordered migrations (`PRAGMA user_version`, and an application id
    /// of its own: "sdbr").
    static let migrator = SQLiteMigrator(
        applicationID: 0x7364_6272,
        migrations: [
            .init(
                version: 1,
                sql: "CREATE TABLE bridged (path TEXT PRIMARY KEY NOT NULL, value TEXT) WITHOUT ROWID")
        ])

    /// Stamps a file made before the states had migrations (one `bridged` table, no version) as
    /// version 1, so the migrator takes it for what it is.
    private static func adoptUnversioned(_ connection: SQLiteConnection) throws(SettingsError) {
        let version = try connection.scalar("PRAGMA user_version") ?? 0
        let application = try connection.scalar("PRAGMA application_id") ?? 0
        let tables = try connection.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table'") ?? 0
        let bridged =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'bridged'")
            ?? 0
        guard version == 0, application == 0, tables == 1, bridged == 1 else { return }
        try connection.execute("PRAGMA application_id = \(migrator.applicationID); PRAGMA user_version = 1")
    }

    /// Whether `path` has a recorded state, and which.
    func state(of path: String) -> String?? {
        states[path]
    }

    /// The recorded keys under `dir`.
    func paths(under dir: String) -> [String] {
        states.keys.filter { $0.hasPrefix(dir) }
    }

    /// Records `updates` (nil: the key is absent on both sides), in one transaction.
    func record(_ updates: [String: String?]) throws(SettingsError) {
        let changed = updates.filter { states[$0.key] != $0.value }
        guard !changed.isEmpty else { return }
        for (path, value) in changed { states[path] = value }
        guard let connection, let upsert else { return }
        try connection.transaction { () throws(SettingsError) in
            for (path, value) in changed {
                try upsert.bind(path, at: 1)
                if let value { try upsert.bind(value, at: 2) } else { try upsert.bindNull(at: 2) }
                try upsert.run()
            }
        }
    }
}
