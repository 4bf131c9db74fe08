import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's tables in PostgreSQL, as ordered migrations (see `docs/SYNC.md`, "The PostgreSQL hub").
///
/// Everything lives in schema `settingsd`. Row-level security lets a role see and change only the
/// namespaces (role names) it is a member of, so isolation is PostgreSQL's, not the client's.
enum HubSchema {
    /// One schema step; versions start at 1 and increase by one.
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

    /// Row-level security's test (schema 2 on): the row's namespace is a role the current role is
    /// a member of, and not a predefined one. An uncorrelated subquery: PostgreSQL computes it
    /// once per statement (a hashed subplan), not once per row.
    private static let members = """
        namespace IN (SELECT r.rolname FROM pg_catalog.pg_roles AS r
            WHERE r.oid OPERATOR(pg_catalog.>=) 16384
                AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER'))
        """

    /// Row-level security's test from schema 5 on: the same question asked of the row's own
    /// namespace, through the system caches (`to_regrole`, `pg_has_role`), never a catalog
    /// query. Schema 2's subquery asked it of every role in the cluster once per statement: with
    /// a role per person, 10,000 roles made each statement, a quiet poll included, cost 5 ms of
    /// the server's CPU; this costs about 1.5 µs a row whatever the number of roles.
    static func isMember(_ role: String, of namespace: String) -> String {
        let oid = "CAST(pg_catalog.to_regrole(pg_catalog.quote_ident(\(namespace))) AS pg_catalog.oid)"
        return """
            coalesce(pg_catalog.pg_has_role(\(role), \(oid), 'MEMBER') AND \(oid) OPERATOR(pg_catalog.>=) 16384, false)
            """
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
                """),
        Migration(
            version: 2,
            sql: """
                -- Only roles granted settingsd_user may use the hub; nothing is granted to PUBLIC.
                DO $$ BEGIN
                    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'settingsd_user') THEN
                        CREATE ROLE settingsd_user NOLOGIN;
                    END IF;
                END $$;
                REVOKE ALL ON SCHEMA settingsd FROM PUBLIC;
                REVOKE ALL ON ALL TABLES IN SCHEMA settingsd FROM PUBLIC;
                REVOKE ALL ON FUNCTION settingsd.visible(name) FROM PUBLIC;
                -- A namespace is a role created by an administrator: predefined roles (pg_*, below
                -- OID 16384) are not namespaces. The search path is pinned and the operators named,
                -- so a role that can create objects somewhere cannot define its own `=`.
                CREATE OR REPLACE FUNCTION settingsd.visible(namespace name) RETURNS boolean
                    LANGUAGE sql STABLE SET search_path = pg_catalog
                    AS $$ SELECT EXISTS (
                        SELECT 1 FROM pg_catalog.pg_roles AS r
                        WHERE r.rolname OPERATOR(pg_catalog.=) namespace
                            AND r.oid OPERATOR(pg_catalog.>=) 16384
                            AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')) $$;
                -- Channel names come from a secret only members can read: nobody else can LISTEN.
                CREATE TABLE settingsd.channels (
                    namespace name PRIMARY KEY,
                    secret text NOT NULL DEFAULT pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '')
                );
                DROP POLICY members ON settingsd.namespaces;
                DROP POLICY members ON settingsd.entries;
                DROP POLICY members ON settingsd.replicas;
                CREATE POLICY members ON settingsd.namespaces
                    USING (\(members))
                    WITH CHECK (settingsd.visible(namespace));
                CREATE POLICY members ON settingsd.entries
                    USING (\(members))
                    WITH CHECK (\(members));
                CREATE POLICY members ON settingsd.replicas
                    USING (\(members))
                    WITH CHECK (settingsd.visible(namespace));
                CREATE POLICY members ON settingsd.channels
                    USING (\(members))
                    WITH CHECK (settingsd.visible(namespace));
                -- Row-level security holds for the tables' owner too.
                ALTER TABLE settingsd.channels ENABLE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.meta ENABLE ROW LEVEL SECURITY;
                CREATE POLICY everyone ON settingsd.meta USING (true);
                ALTER TABLE settingsd.meta FORCE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.namespaces FORCE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.entries FORCE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.replicas FORCE ROW LEVEL SECURITY;
                ALTER TABLE settingsd.channels FORCE ROW LEVEL SECURITY;
                GRANT USAGE ON SCHEMA settingsd TO settingsd_user;
                GRANT SELECT ON settingsd.meta TO settingsd_user;
                GRANT SELECT, INSERT, UPDATE ON settingsd.namespaces, settingsd.entries, settingsd.replicas
                    TO settingsd_user;
                GRANT SELECT, INSERT ON settingsd.channels TO settingsd_user;
                GRANT EXECUTE ON FUNCTION settingsd.visible(name) TO settingsd_user;
                """),
        Migration(
            version: 3,
            sql: """
                -- Each row's fingerprint, computed by PostgreSQL from the row itself, so a hand edit
                -- changes it too: the first 8 bytes of the MD5 of key, 0x00, stamp, replica, then
                -- 0x00 (a tombstone) or 0x01 and the value (docs/SYNC.md, "Anti-entropy with the hub").
                -- No SET clause, so PostgreSQL inlines it; every name is qualified, so no search_path
                -- of the writing session can change what it computes.
                CREATE FUNCTION settingsd.fingerprint(key text, hlc bigint, replica bytea, value bytea)
                    RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
                    AS $$ SELECT CAST(CAST('x' OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.md5(
                        pg_catalog.convert_to(key, 'UTF8') OPERATOR(pg_catalog.||) CAST('\\x00' AS pg_catalog.bytea)
                        OPERATOR(pg_catalog.||) pg_catalog.int8send(hlc) OPERATOR(pg_catalog.||) replica
                        OPERATOR(pg_catalog.||) CASE WHEN value IS NULL THEN CAST('\\x00' AS pg_catalog.bytea)
                            ELSE CAST('\\x01' AS pg_catalog.bytea) OPERATOR(pg_catalog.||) value END), 1, 16)
                        AS pg_catalog."bit"(64)) AS pg_catalog.int8) $$;
                REVOKE ALL ON FUNCTION settingsd.fingerprint(text, bigint, bytea, bytea) FROM PUBLIC;
                GRANT EXECUTE ON FUNCTION settingsd.fingerprint(text, bigint, bytea, bytea) TO settingsd_user;
                ALTER TABLE settingsd.entries ADD COLUMN fp bigint
                    GENERATED ALWAYS AS (settingsd.fingerprint(key, hlc, replica, value)) STORED;
                """),
        Migration(
            version: 4,
            sql: """
                -- A namespace's counter, as a link that polls reads it (through a pooler, thousands of
                -- machines every few seconds): PL/pgSQL keeps the plan of its query for the server
                -- session, which a pooler hands from client to client, so a poll is not planned anew
                -- (planning, row-level security's rule included, was two thirds of its cost). It runs
                -- with the caller's rights: row-level security decides, NULL when it may not see it.
                CREATE FUNCTION settingsd.counter(namespace name) RETURNS bigint
                    LANGUAGE plpgsql STABLE
                    AS $$ BEGIN
                        RETURN (SELECT n.last_seq FROM settingsd.namespaces AS n
                            WHERE n.namespace OPERATOR(pg_catalog.=) counter.namespace);
                    END $$;
                REVOKE ALL ON FUNCTION settingsd.counter(name) FROM PUBLIC;
                GRANT EXECUTE ON FUNCTION settingsd.counter(name) TO settingsd_user;
                """),
        Migration(version: 5, sql: writeFunctions),
        Migration(version: 6, sql: lineage),
        Migration(version: 7, sql: sums),
        Migration(version: 8, sql: pull),
        Migration(version: 9, sql: pullByBudget, compatibleSince: 8),
        Migration(version: 10, sql: leanPull, compatibleSince: 8),
        Migration(version: 11, sql: sharedBatches, compatibleSince: 8),
        Migration(version: 12, sql: pullSkippingLocked, compatibleSince: 8),
        Migration(version: 13, sql: quietCall, compatibleSince: 8),
        Migration(version: 14, sql: notifyAfterCommit, compatibleSince: 8),
    ]

    /// Schema 5: every write goes through a function that runs as the schema's owner, so users
    /// hold SELECT and EXECUTE only. Without INSERT or UPDATE no role can lock a hub table
    /// (`LOCK TABLE … IN ACCESS EXCLUSIVE MODE` needs them) or hold a counter row `FOR UPDATE`;
    /// the one lock a user can still hold is its own namespace's counter, by pushing to it in a
    /// transaction it leaves open, and every push waits for it at most 5 s (`lock_timeout` set
    /// by the function, so through a pooler too).
    ///
    /// A function checks that the session's login role (`session_user`: inside the function
    /// `current_user` is the owner) is a member of the namespace, then names that namespace in
    /// `settingsd.writing` for the transaction; the owner's `writer` policies admit just that one
    /// namespace, so row-level security stays forced for the owner as for everyone else.
    private static let writeFunctions = """
        CREATE FUNCTION settingsd.member(ns name) RETURNS boolean
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ SELECT \(isMember("session_user", of: "ns")) $$;
        CREATE OR REPLACE FUNCTION settingsd.visible(namespace name) RETURNS boolean
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ SELECT \(isMember("current_user", of: "namespace")) $$;
        \(enterFunction(refusing: "write to"))
        -- Makes sure the namespace's counter and channel exist; returns the channel's secret.
        CREATE FUNCTION settingsd.join(ns name) RETURNS text
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ DECLARE found text;
            BEGIN
                PERFORM settingsd.enter(ns);
                INSERT INTO settingsd.namespaces (namespace) VALUES (ns) ON CONFLICT (namespace) DO NOTHING;
                INSERT INTO settingsd.channels (namespace) VALUES (ns) ON CONFLICT (namespace) DO NOTHING;
                SELECT c.secret INTO found FROM settingsd.channels AS c WHERE c.namespace = ns;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                RETURN found;
            END $$;
        \(pushFunction(lineage: false))
        REVOKE ALL ON FUNCTION settingsd.member(name), settingsd.enter(name), settingsd.join(name),
            \(pushSignature(lineage: false)) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.join(name), \(pushSignature(lineage: false)) TO settingsd_user;
        REVOKE INSERT, UPDATE ON \(namespacedTables.map { "settingsd.\($0)" }.joined(separator: ", "))
            FROM settingsd_user;
        \(policies)
        """

    /// `settingsd.enter(ns)`: refuses a session whose login role is not a member of `ns`
    /// ("role R may not `refusing` hub namespace N"), then names `ns` in `settingsd.writing` for
    /// the transaction. Schema 5 creates it; schema 8 replaces it with a wider word.
    static func enterFunction(refusing verb: String, replacing: Bool = false) -> String {
        """
        CREATE \(replacing ? "OR REPLACE " : "")FUNCTION settingsd.enter(ns name) RETURNS void
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                \(enterBody(refusing: verb, unless: "settingsd.member(ns)"))
            END $$;
        """
    }

    /// What `settingsd.enter(ns)` does, for a function to inline: refuses the session unless
    /// `condition` holds, then names `ns` in `settingsd.writing` for the transaction.
    static func enterBody(refusing verb: String, unless condition: String) -> String {
        """
        IF NOT \(condition) THEN
                    RAISE EXCEPTION 'role % may not \(verb) hub namespace %', session_user, ns
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', ns, true);
        """
    }

    /// The tables with a `namespace` column, which row-level security guards.
    static let namespacedTables = ["namespaces", "entries", "replicas", "channels"]

    /// The namespace a write function named for this transaction (NULL: none).
    static let writing =
        "CAST(pg_catalog.current_setting('settingsd.writing', true) AS pg_catalog.name)"

    /// Schema 5's policies on each namespaced table: users read the namespaces they are members
    /// of (reading only: they write nothing themselves); the owner, which the write functions run
    /// as, reads and writes the one namespace named in `settingsd.writing`.
    private static let policies = namespacedTables.map { table in
        """
        DROP POLICY members ON settingsd.\(table);
        CREATE POLICY members ON settingsd.\(table) FOR SELECT USING (\(isMember("current_user", of: "namespace")));
        CREATE POLICY writer ON settingsd.\(table) TO CURRENT_USER
            USING (namespace OPERATOR(pg_catalog.=) \(writing))
            WITH CHECK (namespace OPERATOR(pg_catalog.=) \(writing));
        """
    }.joined(separator: "\n")

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
    static func check(_ connection: PostgresConnection) throws(SettingsError) {
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
            return
        }
        guard found >= (migrations.last?.compatibleSince ?? current) else {
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
        return try meta("schema_version", connection).flatMap { Int64($0) } ?? 0
    }

    /// The value of `name` in `settingsd.meta` (nil: no such row).
    private static func meta(_ name: String, _ connection: PostgresConnection) throws(SettingsError)
        -> String?
    {
        let rows = try connection.execute("SELECT value FROM settingsd.meta WHERE name = $1", [.text(name)])
        return rows.count == 1 && !rows.isNull(0, 0) ? rows.text(0, 0) : nil
    }

    private static func newer(_ version: Int64, _ connection: PostgresConnection) -> SettingsError {
        SettingsError(
            .unsupportedSchema,
            "the hub \(connection.displayName) has schema version \(version), newer than this settingsd supports (\(current)); upgrade settingsd"
        )
    }
}
