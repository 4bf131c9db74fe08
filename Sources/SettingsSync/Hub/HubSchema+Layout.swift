import SettingsStore
import SettingsWire

extension HubSchema {
    /// The first release's schema: tables, row-level security, then the functions users call
    /// (`writeFunctions`, `readFunctions`, `sharedBatches`) and what they may run.
    ///
    /// Names in functions are qualified and operators named (`OPERATOR(pg_catalog.=)`), and
    /// functions that run as the owner pin `search_path`, so a role that can create objects
    /// somewhere cannot slip its own `=` or table into them.
    static let layout = """
        CREATE SCHEMA IF NOT EXISTS settingsd;
        -- Only roles granted settingsd_user may use the hub; nothing is granted to PUBLIC.
        DO $$ BEGIN
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'settingsd_user') THEN
                CREATE ROLE settingsd_user NOLOGIN;
            END IF;
        END $$;
        REVOKE ALL ON SCHEMA settingsd FROM PUBLIC;

        -- The hub's own facts: its id; the polls a second the machines of one namespace make
        -- together at most (poll_rate, set by hub init --poll-rate); and how often its entries or
        -- counters were changed other than through its functions (edits, which settingsd.edited
        -- counts).
        CREATE TABLE settingsd.meta (
            name text PRIMARY KEY,
            value text NOT NULL
        );
        INSERT INTO settingsd.meta (name, value) VALUES
            ('hub_id', pg_catalog.gen_random_uuid()::text), ('poll_rate', '\(HubPollPlan.defaultRate)'),
            ('edits', '0');

        -- One row per namespace: the counter that orders its hub sequence numbers.
        CREATE TABLE settingsd.namespaces (
            namespace name PRIMARY KEY,
            last_seq bigint NOT NULL DEFAULT 0
        );
        -- Notification channels are named after a secret only members can read: nobody else can
        -- LISTEN to a namespace, or learn when it changes.
        CREATE TABLE settingsd.channels (
            namespace name PRIMARY KEY,
            secret text NOT NULL DEFAULT pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '')
        );

        -- Each row's fingerprint, computed by PostgreSQL from the row itself, so a hand edit
        -- changes it too: the first 8 bytes of the MD5 of key, 0x00, stamp, replica, then 0x00 (a
        -- tombstone) or 0x01 and the value (docs/SYNC.md, "Anti-entropy with the hub"). No SET
        -- clause, so PostgreSQL inlines it; every name is qualified, so no search_path of the
        -- writing session can change what it computes.
        CREATE FUNCTION settingsd.fingerprint(key text, hlc bigint, replica bytea, value bytea)
            RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT CAST(CAST('x' OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.md5(
                pg_catalog.convert_to(key, 'UTF8') OPERATOR(pg_catalog.||) CAST('\\x00' AS pg_catalog.bytea)
                OPERATOR(pg_catalog.||) pg_catalog.int8send(hlc) OPERATOR(pg_catalog.||) replica
                OPERATOR(pg_catalog.||) CASE WHEN value IS NULL THEN CAST('\\x00' AS pg_catalog.bytea)
                    ELSE CAST('\\x01' AS pg_catalog.bytea) OPERATOR(pg_catalog.||) value END), 1, 16)
                AS pg_catalog."bit"(64)) AS pg_catalog.int8) $$;

        -- The winning entry per key; value NULL is a tombstone. pushed_by is the replica whose push
        -- last numbered the row (its own rows come back to it without their value).
        CREATE TABLE settingsd.entries (
            namespace name NOT NULL,
            key text NOT NULL,
            value bytea,
            hlc bigint NOT NULL,
            replica bytea NOT NULL,
            hub_seq bigint NOT NULL,
            pushed_by bytea NOT NULL,
            fp bigint GENERATED ALWAYS AS (settingsd.fingerprint(key, hlc, replica, value)) STORED,
            PRIMARY KEY (namespace, key)
        );
        CREATE INDEX entries_by_seq ON settingsd.entries (namespace, hub_seq);

        -- What each replica pushed, under which incarnation (docs/SYNC.md, "Lineage through the
        -- hub"), and when it was last seen: a push, or once a day a polling link's plan.
        CREATE TABLE settingsd.replicas (
            namespace name NOT NULL,
            replica bytea NOT NULL,
            pushed_seq bigint NOT NULL DEFAULT 0,
            incarnation bytea,
            last_seen timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (namespace, replica)
        );

        -- How many replicas each namespace saw in the last week, counted at most once a minute
        -- (settingsd.poll_plan): what a polling link's interval is derived from.
        CREATE TABLE settingsd.fleets (
            namespace name PRIMARY KEY,
            replicas bigint NOT NULL,
            counted_at timestamptz NOT NULL
        );

        \(security)
        \(writeFunctions)
        \(readFunctions)
        \(sharedBatches)
        """

    /// Row-level security, forced for the tables' owner too: users read the namespaces they are
    /// members of; the owner, which the write functions run as, reads and writes the one
    /// namespace a function named in `settingsd.writing` for the transaction. Users hold
    /// `SELECT` only, so no role can lock a hub table (`LOCK TABLE` needs more) or hold a counter
    /// row `FOR UPDATE`.
    private static let security = """
        ALTER TABLE settingsd.meta ENABLE ROW LEVEL SECURITY;
        ALTER TABLE settingsd.meta FORCE ROW LEVEL SECURITY;
        CREATE POLICY everyone ON settingsd.meta USING (true);
        GRANT USAGE ON SCHEMA settingsd TO settingsd_user;
        GRANT SELECT ON settingsd.meta TO settingsd_user;
        \(namespacedTables.map(guarding).joined(separator: "\n"))
        REVOKE ALL ON FUNCTION settingsd.fingerprint(text, bigint, bytea, bytea) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.fingerprint(text, bigint, bytea, bytea) TO settingsd_user;
        """
}

extension HubSchema {
    /// Row-level security for one table with a `namespace` column: members read their
    /// namespaces' rows, the owner writes the one a write function named.
    static func guarding(_ table: String) -> String {
        """
        ALTER TABLE settingsd.\(table) ENABLE ROW LEVEL SECURITY;
        ALTER TABLE settingsd.\(table) FORCE ROW LEVEL SECURITY;
        CREATE POLICY members ON settingsd.\(table) FOR SELECT
            USING (\(isMember("current_user", of: "namespace")) AND \(notReserved("namespace")));
        CREATE POLICY writer ON settingsd.\(table) TO CURRENT_USER
            USING (namespace OPERATOR(pg_catalog.=) \(writing))
            WITH CHECK (namespace OPERATOR(pg_catalog.=) \(writing));
        GRANT SELECT ON settingsd.\(table) TO settingsd_user;
        """
    }
}
