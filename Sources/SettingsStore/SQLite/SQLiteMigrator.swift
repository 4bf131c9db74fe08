/// Applies ordered schema migrations, recording the schema version in `PRAGMA user_version`.
///
/// A database stamped with a foreign `application_id`, or with a version newer than the last
/// known migration, is refused before anything is written to it.
package struct SQLiteMigrator {
    /// One schema step; `version` numbers start at 1 and increase by one.
    package struct Migration {
        let version: Int64
        let sql: String

        package init(version: Int64, sql: String) {
            self.version = version
            self.sql = sql
        }
    }

    package let applicationID: Int64
    package let migrations: [Migration]

    package init(applicationID: Int64, migrations: [Migration]) {
        self.applicationID = applicationID
        self.migrations = migrations
    }

    /// Throws unless the database is ours (or blank) and not newer than the last migration; with
    /// `requireCurrent`, also unless it is fully migrated (a reader cannot migrate it).
    package func check(_ connection: SQLiteConnection, requireCurrent: Bool = false) throws(SettingsError) {
        let path = connection.path
        let current = try connection.scalar("PRAGMA user_version") ?? 0
        let application = try connection.scalar("PRAGMA application_id") ?? 0
        let tables = try connection.scalar("SELECT count(*) FROM sqlite_schema") ?? 0
        guard (current == 0 && application == 0 && tables == 0) || application == applicationID else {
            throw SettingsError(
                .corruptDatabase,
                "'\(path)' is a SQLite database of another application, not a settings store",
                path: path)
        }
        let latest = migrations.last?.version ?? 0
        guard current <= latest else {
            throw SettingsError(
                .unsupportedSchema,
                "'\(path)' has schema version \(current), newer than this settingsd supports (\(latest))",
                path: path)
        }
        guard !requireCurrent || current == latest else {
            throw SettingsError(
                .unsupportedSchema,
                "'\(path)' has schema version \(current) and needs upgrading: open it once for writing",
                path: path)
        }
    }

    /// Applies the migrations the database lacks; call `check(_:)` first.
    package func migrate(_ connection: SQLiteConnection) throws(SettingsError) {
        let current = try connection.scalar("PRAGMA user_version") ?? 0
        for migration in migrations where migration.version > current {
            try connection.transaction { () throws(SettingsError) in
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA application_id = \(applicationID)")
                try connection.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}
