import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's tables and functions in PostgreSQL, as ordered migrations (see `docs/SYNC.md`, "The
/// PostgreSQL hub").
///
/// Everything lives in schema `settingsd`. Row-level security lets a role see only the
/// namespaces (role names) it is a member of, and users hold `SELECT` and `EXECUTE` only: every
/// write goes through a function that checks membership and runs as the schema's owner, so
/// isolation is PostgreSQL's, not the client's.
///
/// The first release's schema is version 15, made in one step (`layout`); version 16 adds seal
/// records (`seals`), 17 replicas' names (`names`), 18 fleet policies (`policies`). Versions 1 to 14 were development builds' steps towards 15; no release
/// shipped them, and a hub at one of them is refused with how to replace it (`migrate`).
enum HubSchema {
    /// One schema step; versions increase by one from `first`.
    struct Migration {
        let version: Int64
        let sql: String
        /// The oldest schema version whose builds a hub at this version still serves: its own,
        /// unless the step changed only how functions work, not what they take or return.
        let compatibleSince: Int64

        package init(version: Int64, sql: String, compatibleSince: Int64? = nil) {
            self.version = version
            self.sql = sql
            self.compatibleSince = compatibleSince ?? version
        }
    }

    static let migrations: [Migration] = [Migration(version: first, sql: layout), seals, names, policies]

    /// The version of the first release's schema, which `hub init` makes in one step.
    static let first: Int64 = 15

    /// SQL that holds when `role` is a member of the role named `namespace`, asked through the
    /// system caches (`to_regrole`, `pg_has_role`) rather than a catalog query, so it costs about
    /// 1.5 µs however many roles the cluster holds (a role per person is common), and when that
    /// role is not a predefined one (`pg_*`, below OID 16384).
    static func isMember(_ role: String, of namespace: String) -> String {
        let oid = "CAST(pg_catalog.to_regrole(pg_catalog.quote_ident(\(namespace))) AS pg_catalog.oid)"
        return """
            coalesce(pg_catalog.pg_has_role(\(role), \(oid), 'MEMBER') AND \(oid) OPERATOR(pg_catalog.>=) 16384, false)
            """
    }

    /// SQL that holds when the namespace `name` is not one of settingsd's own roles
    /// (`settingsd_user`, which every hub user is a member of): one every user could read and
    /// write would be a channel between tenants.
    static func notReserved(_ name: String) -> String {
        "NOT pg_catalog.starts_with(\(name)::text, 'settingsd_')"
    }

    /// The tables with a `namespace` column that schema 15 made, which row-level security guards
    /// (schema 16 adds `seals`, guarded the same way).
    static let namespacedTables = ["namespaces", "entries", "replicas", "channels", "fleets"]

    /// The namespace a write function named for this transaction (NULL: none).
    static let writing =
        "CAST(pg_catalog.current_setting('settingsd.writing', true) AS pg_catalog.name)"

    /// The schema version this build reads and writes.
    static var current: Int64 { migrations.last?.version ?? 0 }

    /// Creates or upgrades the schema through version `target` (this build's by default),
    /// idempotently, one transaction per step; returns the version the hub had before (0: none).
    ///
    /// Each step holds the migration lock for its own transaction only (nothing is left on a
    /// session), so `hub init` works through a pooler in transaction pooling too.
    @discardableResult
    static func migrate(_ connection: PostgresConnection, through target: Int64 = current)
        throws(SettingsError)
        -> Int64
    {
        var before: Int64?
        while true {
            try connection.execute("BEGIN")
            do throws(SettingsError) {
                // One initialiser at a time, even from several machines; a session that holds the
                // lock (any role can take an advisory lock) makes init fail in time, not hang.
                try lockForMigration(connection)
                try checkOwnership(connection)
                let found = try version(connection)
                if before == nil { before = found }
                guard found <= current else { throw newer(found, connection) }
                guard found == 0 || found >= first else { throw developmentSchema(found, connection) }
                guard let migration = migrations.first(where: { $0.version > found && $0.version <= target })
                else {
                    try connection.execute("COMMIT")
                    return before ?? found
                }
                try connection.executeScript(migration.sql)
                try connection.execute(
                    "INSERT INTO settingsd.meta (name, value) VALUES ('schema_version', $1), ('compatible_since', $2) "
                        + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    [.text(String(migration.version)), .text(String(migration.compatibleSince))])
                try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The advisory lock `hub init` holds while it migrates.
    private static let migrationLock: Int64 = 7_465_746_573

    /// Takes the migration lock for the transaction under way, trying for up to `seconds`.
    private static func lockForMigration(_ connection: PostgresConnection, seconds: Double = 5)
        throws(SettingsError)
    {
        let deadline = Deadline.after(.milliseconds(Int64(seconds * 1000)))
        while true {
            let taken = try connection.execute(
                "SELECT pg_catalog.pg_try_advisory_xact_lock(\(migrationLock))::int::bigint")
            if taken.count == 1, taken.int64(0, 0) == 1 { return }
            guard !deadline.hasPassed else {
                throw SettingsError(
                    .timeout,
                    "another session holds the hub's migration lock (advisory lock \(migrationLock)) on \(connection.displayName): another 'hub init' is running, or a role is holding it; try again, or end that session"
                )
            }
            usleep(100_000)
        }
    }

    /// Refuses a `settingsd` schema, or an object in it, that another role owns: a tenant that
    /// created the schema first could otherwise read what others push (its tables, its rules).
    private static func checkOwnership(_ connection: PostgresConnection) throws(SettingsError) {
        let rows = try connection.execute(
            """
            SELECT pg_catalog.pg_get_userbyid(n.nspowner)::text,
                (SELECT count(*) FROM pg_catalog.pg_class AS c
                    WHERE c.relnamespace OPERATOR(pg_catalog.=) n.oid
                        AND c.relowner OPERATOR(pg_catalog.<>) n.nspowner)::bigint,
                (n.nspowner OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user))::int::bigint
            FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'settingsd'
            """)
        guard rows.count == 1 else { return }
        let owner = rows.text(0, 0)
        guard rows.int64(0, 2) == 1 else {
            throw SettingsError(
                .accessDenied,
                "schema settingsd on \(connection.displayName) belongs to role '\(owner)', not to the role running hub init: it was not made by hub init; drop it, or run hub init as its owner"
            )
        }
        guard rows.int64(0, 1) == 0 else {
            throw SettingsError(
                .accessDenied,
                "schema settingsd on \(connection.displayName) holds objects another role owns: not made by hub init; drop them first"
            )
        }
    }

    /// Throws unless the hub's schema serves this build, with a message naming `hub init`: this
    /// build's version, an older one whose functions take and return what this build's do (the
    /// steps since changed only how they work), or a newer one that says it still serves it.
    ///
    /// - Returns: The hub's schema version.
    @discardableResult
    static func check(_ connection: PostgresConnection) throws(SettingsError) -> Int64 {
        let found = try version(connection)
        guard found != 0 else {
            throw SettingsError(
                .unsupportedSchema,
                "the hub \(connection.displayName) has no settingsd schema; create it with 'settingsd hub init URL'"
            )
        }
        if found > current {
            let servedSince = try meta("compatible_since", connection).flatMap { Int64($0) } ?? found
            guard servedSince <= current else { throw newer(found, connection) }
            return found
        }
        guard found >= first else { throw developmentSchema(found, connection) }
        guard found >= (migrations.last?.compatibleSince ?? current) else {
            throw SettingsError(
                .unsupportedSchema,
                "the hub \(connection.displayName) has schema version \(found), older than this settingsd's \(current); upgrade it with 'settingsd hub init URL'"
            )
        }
        return found
    }

    /// The hub's schema version, 0 when it has none.
    ///
    /// - Throws: `accessDenied` naming the grant when the role may not use the hub's schema.
    static func version(_ connection: PostgresConnection) throws(SettingsError) -> Int64 {
        let found = Result { () throws(SettingsError) -> Int64 in
            let exists = try connection.execute(
                "SELECT (to_regclass('settingsd.meta') IS NOT NULL)::int::bigint")
            guard exists.count == 1, exists.int64(0, 0) == 1 else { return 0 }
            return try meta("schema_version", connection).flatMap { Int64($0) } ?? 0
        }
        if case .failure(let error) = found, error.code == .accessDenied {
            let role = (try? connection.execute("SELECT current_user::text").text(0, 0)) ?? "<role>"
            throw SettingsError(
                .accessDenied,
                "\(error.message); the role '\(role)' is not a hub user: an administrator grants it with GRANT settingsd_user TO \"\(role)\"",
                sql: error.sql)
        }
        return try found.get()
    }

    /// The value of `name` in `settingsd.meta` (nil: no such row).
    private static func meta(_ name: String, _ connection: PostgresConnection) throws(SettingsError)
        -> String?
    {
        let rows = try connection.execute("SELECT value FROM settingsd.meta WHERE name = $1", [.text(name)])
        return rows.count == 1 && !rows.isNull(0, 0) ? rows.text(0, 0) : nil
    }

    /// A hub made by a development build before the first release (schema 1 to 14).
    private static func developmentSchema(_ version: Int64, _ connection: PostgresConnection) -> SettingsError
    {
        SettingsError(
            .unsupportedSchema,
            "the hub \(connection.displayName) has schema version \(version), made by a development build before the first release; make it anew: 'DROP SCHEMA settingsd CASCADE', then 'settingsd hub init URL' (every machine then pushes what it holds again)"
        )
    }

    private static func newer(_ version: Int64, _ connection: PostgresConnection) -> SettingsError {
        SettingsError(
            .unsupportedSchema,
            "the hub \(connection.displayName) has schema version \(version), newer than this settingsd supports (\(current)); upgrade settingsd"
        )
    }
}
