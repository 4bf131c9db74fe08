import SettingsStore
import SettingsWire

extension HubSchema {
    /// Schema 6: each replica's pushed position is stored with the incarnation it was pushed
    /// under, and a push names the position it expects to find, so a copied or restored store
    /// file is told from the replica it copies exactly as socket peers tell (`Lineage`), and two
    /// live copies of one file can never both push under its id.
    static let lineage = """
        ALTER TABLE settingsd.replicas ADD COLUMN incarnation bytea;
        DROP FUNCTION \(pushSignature(lineage: false));
        \(pushFunction(lineage: true))
        REVOKE ALL ON FUNCTION \(pushSignature(lineage: true)) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION \(pushSignature(lineage: true)) TO settingsd_user;
        """

    /// Schemas 1 to 13's notification inside the push.
    private static let notification = """
            -- Carries nothing: a listener learns only that something changed, then pulls.
                        PERFORM pg_catalog.pg_notify('settingsd_' || c.secret, '')
                            FROM settingsd.channels AS c WHERE c.namespace = ns;
        """

    /// Schema 14: a push notifies nobody inside its transaction; `settingsd.notify(ns)`, called
    /// after the push commits, tells the namespace's listeners. Its failure (a full notification
    /// queue, which any login role can cause by listening in a transaction it keeps open) costs
    /// listeners only the wait for their next look, and no push fails for it. Pulls never wait
    /// for another session (`pullWithoutWaiting`).
    static let notifyAfterCommit = """
        \(pushFunction(lineage: true, notifies: false, replacing: true))
        CREATE FUNCTION settingsd.notify(ns name) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                PERFORM settingsd.enter(ns);
                -- Carries nothing: a listener learns only that something changed, then pulls.
                PERFORM pg_catalog.pg_notify('settingsd_' || c.secret, '')
                    FROM settingsd.channels AS c WHERE c.namespace = ns;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        REVOKE ALL ON FUNCTION settingsd.notify(name) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.notify(name) TO settingsd_user;
        \(pullWithoutWaiting)
        -- settingsd's own roles (settingsd_user, which every hub user is a member of) are no
        -- namespace: one every user could read and write would be a channel between tenants.
        CREATE OR REPLACE FUNCTION settingsd.member(ns name) RETURNS boolean
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ SELECT \(isMember("session_user", of: "ns")) AND \(notReserved("ns")) $$;
        CREATE OR REPLACE FUNCTION settingsd.visible(namespace name) RETURNS boolean
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ SELECT \(isMember("current_user", of: "namespace")) AND \(notReserved("namespace")) $$;
        """

    /// SQL that holds when the namespace `name` is not one of settingsd's own roles.
    static func notReserved(_ name: String) -> String {
        "NOT starts_with(\(name)::text, 'settingsd_')"
    }

    /// The SQLSTATE of a push whose expected position is not the hub's: another copy of the
    /// replica pushed meanwhile, or the hub lost or restored its record.
    static let positionMovedState = "SD001"

    /// `settingsd.push`'s signature, as `DROP`, `GRANT` and `REVOKE` name it.
    static func pushSignature(lineage: Bool) -> String {
        "settingsd.push(name, bytea, bigint, text[], bytea[], bigint[], bytea[]\(lineage ? ", bytea, bigint, bytea" : ""))"
    }

    /// One push: takes the next hub sequence numbers under the counter row's lock, keeps per key
    /// the higher version, records how far the pusher pushed only when the counter numbered the
    /// batch (or the batch is empty), and notifies listeners once it commits. Returns the number
    /// before the batch's first, NULL when nothing was numbered.
    ///
    /// With `lineage` (schema 6) the pusher names its running incarnation and the position it
    /// last read or wrote (`expected_seq` NULL: unchecked); a record that is not that one fails
    /// the whole push with `positionMovedState`, so nothing of it lands.
    ///
    /// From schema 14 (`notifies` false) the push itself notifies nobody: a `NOTIFY` in the write
    /// transaction fails the whole push when the server's notification queue is full, which any
    /// login role can cause. The pusher calls `settingsd.notify` after the commit instead.
    static func pushFunction(lineage: Bool, notifies: Bool = true, replacing: Bool = false) -> String {
        let record =
            lineage
            ? """
                    IF expected_seq IS NOT NULL THEN
                        SELECT r.pushed_seq, r.incarnation INTO found_seq, found_incarnation
                            FROM settingsd.replicas AS r WHERE r.namespace = ns AND r.replica = pusher FOR UPDATE;
                        IF (FOUND AND (found_seq, found_incarnation) IS DISTINCT FROM (expected_seq, expected_incarnation))
                            OR (NOT FOUND AND expected_seq <> 0) THEN
                            RAISE EXCEPTION 'replica % pushed to hub namespace % elsewhere: the hub holds position %, this session expected % (a copy of its store file, or a hub restored or edited)',
                                pusher, ns, coalesce(found_seq, 0), expected_seq USING ERRCODE = '\(positionMovedState)';
                        END IF;
                    END IF;
                    INSERT INTO settingsd.replicas AS r (namespace, replica, pushed_seq, incarnation, last_seen)
                    VALUES (ns, pusher, pushed_through, pusher_incarnation, now())
                    ON CONFLICT (namespace, replica) DO UPDATE
                        SET pushed_seq = CASE WHEN expected_seq IS NULL
                                THEN GREATEST(r.pushed_seq, excluded.pushed_seq) ELSE excluded.pushed_seq END,
                            incarnation = excluded.incarnation, last_seen = now();
            """
            : """
                    INSERT INTO settingsd.replicas AS r (namespace, replica, pushed_seq, last_seen)
                    VALUES (ns, pusher, pushed_through, now())
                    ON CONFLICT (namespace, replica) DO UPDATE
                        SET pushed_seq = GREATEST(r.pushed_seq, excluded.pushed_seq), last_seen = now();
            """
        let parameters =
            lineage ? ", pusher_incarnation bytea, expected_seq bigint, expected_incarnation bytea" : ""
        let variables = lineage ? " found_seq bigint; found_incarnation bytea;" : ""
        return """
            CREATE \(replacing ? "OR REPLACE " : "")FUNCTION settingsd.push(ns name, pusher bytea, pushed_through bigint,
                    new_keys text[], new_values bytea[], new_stamps bigint[], new_writers bytea[]\(parameters))
                RETURNS bigint
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
                AS $$ DECLARE
                    size bigint := coalesce(pg_catalog.cardinality(new_keys), 0);
                    base bigint;\(variables)
                BEGIN
                    PERFORM settingsd.enter(ns);
                    IF size > 0 THEN
                        UPDATE settingsd.namespaces AS n SET last_seq = n.last_seq + size
                            WHERE n.namespace = ns RETURNING n.last_seq - size INTO base;
                    END IF;
                    IF size > 0 AND base IS NOT NULL THEN
                        INSERT INTO settingsd.entries AS e (namespace, key, value, hlc, replica, hub_seq, pushed_by)
                        SELECT ns, v.key, v.value, v.hlc, v.replica, base + v.ord, pusher
                        FROM unnest(new_keys, new_values, new_stamps, new_writers)
                            WITH ORDINALITY AS v (key, value, hlc, replica, ord)
                        ON CONFLICT (namespace, key) DO UPDATE
                            SET value = excluded.value, hlc = excluded.hlc, replica = excluded.replica,
                                hub_seq = excluded.hub_seq, pushed_by = excluded.pushed_by
                            -- The higher version wins; at an equal version, bytes that differ (a hand
                            -- edit, a damaged row) are replaced by what a replica holds (anti-entropy).
                            WHERE (excluded.hlc, excluded.replica) > (e.hlc, e.replica)
                                OR ((excluded.hlc, excluded.replica) = (e.hlc, e.replica)
                                    AND excluded.value IS DISTINCT FROM e.value);
            \(notifies ? notification : "")
                    END IF;
                    IF size = 0 OR base IS NOT NULL THEN
            \(record)
                    END IF;
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN base;
                END $$;
            """
    }
}
