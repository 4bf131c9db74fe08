extension HubSchema {
    /// Schema 17: the names replicas go by (`settingsd run --name`, else the host name), per
    /// namespace, so every machine's `status` and `history` name the others. A table apart from
    /// `replicas` (whose rows are the lineage's and only a push writes), guarded like every
    /// namespaced table; only functions add, nothing is taken away, so a hub at 17 still serves
    /// builds of 16.
    static let names = Migration(
        version: 17,
        sql: """
            CREATE TABLE settingsd.replica_names (
                namespace name NOT NULL,
                replica bytea NOT NULL,
                replica_name text NOT NULL,
                named_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, replica)
            );
            \(guarding("replica_names"))

            -- Records the name the replica who goes by in namespace ns (at most 64 characters).
            CREATE FUNCTION settingsd.name_replica(ns name, who bytea, new_name text)
                RETURNS void
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$ BEGIN
                    \(enterBody)
                    INSERT INTO settingsd.replica_names AS r (namespace, replica, replica_name)
                        VALUES (ns, who, pg_catalog.left(new_name, 64))
                        ON CONFLICT (namespace, replica) DO UPDATE
                            SET replica_name = excluded.replica_name, named_at = now()
                            WHERE r.replica_name IS DISTINCT FROM excluded.replica_name;
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                END $$;
            REVOKE ALL ON FUNCTION settingsd.name_replica(name, bytea, text) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION settingsd.name_replica(name, bytea, text) TO settingsd_user;
            """,
        compatibleSince: 16)
}
