/// The hub's tables in PostgreSQL, as ordered migrations (see `docs/SYNC.md`, "The PostgreSQL hub").
///
/// Everything lives in schema `settingsd`. Row-level security lets a role see and change only the
/// namespaces (role names) it is a member of, so isolation is PostgreSQL's, not the client's.
enum HubSchema {
    /// One schema step; versions start at 1 and increase by one.
    struct Migration {
        let version: Int64
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1,
            sql: """
                CREATE SCHEMA IF NOT EXISTS settingsd;
                CREATE TABLE settingsd.meta (
                    name text PRIMARY KEY,
                    value text NOT NULL
                );
                INSERT INTO settingsd.meta (name, value) VALUES ('hub_id', gen_random_uuid()::text);
                -- Whether the current role may use a namespace: it is a member of the role so named.
                CREATE FUNCTION settingsd.visible(namespace name) RETURNS boolean
                    LANGUAGE sql STABLE
                    AS $$ SELECT EXISTS (
                        SELECT 1 FROM pg_catalog.pg_roles AS r
                        WHERE r.rolname = namespace AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')) $$;
                -- One row per namespace: the counter that orders its hub sequence numbers.
                CREATE TABLE settingsd.namespaces (
                    namespace name PRIMARY KEY,
                    last_seq bigint NOT NULL DEFAULT 0
                );
                -- The winning entry per key; value NULL is a tombstone.
                CREATE TABLE settingsd.entries (
                    namespace name NOT NULL,
                    key text NOT NULL,
                    value bytea,
                    hlc bigint NOT NULL,
                    replica bytea NOT NULL,
                    hub_seq bigint NOT NULL,
                    pushed_by bytea NOT NULL,
                    PRIMARY KEY (namespace, key)
                );
                CREATE INDEX entries_by_seq ON settingsd.entries (namespace, hub_seq);
                -- What each replica pushed, and when it was last seen.
                CREATE TABLE settingsd.replicas (
                    namespace name NOT NULL,
                    replica bytea NOT NULL,
                    pushed_seq bigint NOT NULL DEFAULT 0,
                    last_seen timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (namespace, replica)
                );
                ALTER TABLE settingsd.namespaces ENABLE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.entries ENABLE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.replicas ENABLE ROW LEVEL SECURITY;
                -- The role's namespaces as an uncorrelated subquery: PostgreSQL computes it once per
                -- statement (a hashed subplan), not once per row.
                CREATE POLICY members ON settingsd.namespaces
                    USING (namespace IN (SELECT r.rolname FROM pg_catalog.pg_roles AS r
                        WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')))
                    WITH CHECK (settingsd.visible(namespace));
                CREATE POLICY members ON settingsd.entries
                    USING (namespace IN (SELECT r.rolname FROM pg_catalog.pg_roles AS r
                        WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')))
                    WITH CHECK (namespace IN (SELECT r.rolname FROM pg_catalog.pg_roles AS r
                        WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')));
                CREATE POLICY members ON settingsd.replicas
                    USING (namespace IN (SELECT r.rolname FROM pg_catalog.pg_roles AS r
                        WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')))
                    WITH CHECK (settingsd.visible(namespace));
                GRANT USAGE ON SCHEMA settingsd TO PUBLIC;
                GRANT SELECT ON settingsd.meta TO PUBLIC;
                GRANT SELECT, INSERT, UPDATE ON settingsd.namespaces, settingsd.entries, settingsd.replicas TO PUBLIC;
                """)
    ]

    /// The schema version this build reads and writes.
    static var current: Int64 { migrations.last?.version ?? 0 }

    /// Creates or upgrades the schema, idempotently, one transaction per step; returns the
    /// version the hub had before (0: none).
    @discardableResult
    static func migrate(_ connection: PostgresConnection) throws(SettingsError) -> Int64 {
        // One initialiser at a time, even from several machines.
        try connection.execute("SELECT pg_advisory_lock(7465746573)")
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(7465746573)") }
        let before = try version(connection)
        guard before <= current else { throw newer(before, connection) }
        for migration in migrations where migration.version > before {
            try connection.execute("BEGIN")
            do throws(SettingsError) {
                try connection.executeScript(migration.sql)
                try connection.execute(
                    "INSERT INTO settingsd.meta (name, value) VALUES ('schema_version', $1) "
                        + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    [.text(String(migration.version))])
                try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
        }
        return before
    }

    /// Throws unless the hub holds exactly this build's schema, with a message naming `hub init`.
    static func check(_ connection: PostgresConnection) throws(SettingsError) {
        let found = try version(connection)
        guard found != 0 else {
            throw SettingsError(
                .unsupportedSchema,
                "the hub \(connection.displayName) has no settingsd schema; create it with 'settingsd hub init URL'"
            )
        }
        guard found <= current else { throw newer(found, connection) }
        guard found == current else {
            throw SettingsError(
                .unsupportedSchema,
                "the hub \(connection.displayName) has schema version \(found), older than this settingsd's \(current); upgrade it with 'settingsd hub init URL'"
            )
        }
    }

    /// The hub's schema version, 0 when it has none.
    static func version(_ connection: PostgresConnection) throws(SettingsError) -> Int64 {
        let exists = try connection.execute("SELECT (to_regclass('settingsd.meta') IS NOT NULL)::int::bigint")
        guard exists.count == 1, exists.int64(0, 0) == 1 else { return 0 }
        let rows = try connection.execute("SELECT value FROM settingsd.meta WHERE name = 'schema_version'")
        guard rows.count == 1, let version = Int64(rows.text(0, 0)) else { return 0 }
        return version
    }

    private static func newer(_ version: Int64, _ connection: PostgresConnection) -> SettingsError {
        SettingsError(
            .unsupportedSchema,
            "the hub \(connection.displayName) has schema version \(version), newer than this settingsd supports (\(current)); upgrade settingsd"
        )
    }
}
