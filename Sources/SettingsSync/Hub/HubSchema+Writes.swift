import SettingsStore
import SettingsWire

extension HubSchema {
    /// The SQLSTATE of a push whose expected position is not the hub's: another copy of the
    /// replica pushed meanwhile, or the hub lost or restored its record.
    static let positionMovedState = "SD001"

    /// `settingsd.push`'s signature, as `GRANT` and `REVOKE` name it.
    static let pushSignature =
        "settingsd.push(name, bytea, bigint, text[], bytea[], bigint[], bytea[], bytea, bigint, bytea)"

    /// The SQLSTATE of a push or pull that names another key than the namespace is sealed under
    /// (or names one when it is plain, or none when it is sealed): the link joins again.
    static let sealChangedState = "SD002"

    /// Fails the statement unless `sealed_under` names the key the namespace `ns` is sealed
    /// under (both NULL: plain).
    static let sealCheck = """
        IF (SELECT s.key_id FROM settingsd.seals AS s WHERE s.namespace = ns) IS DISTINCT FROM sealed_under THEN
                    RAISE EXCEPTION 'hub namespace % is sealed otherwise than this link seals (%): joining again', ns,
                        coalesce(sealed_under, 'plain') USING ERRCODE = '\(sealChangedState)';
                END IF;
        """

    /// The functions that write. Each checks that the session's login role (`session_user`:
    /// inside the function `current_user` is the owner) is a member of the namespace, then names
    /// it in `settingsd.writing` for the transaction, which the owner's `writer` policies admit.
    /// Each waits at most 5 s for a lock (`lock_timeout`, set by the function, so through a
    /// pooler too): the one lock a user can hold is its own namespace's counter, by pushing in a
    /// transaction it leaves open.
    static let writeFunctions = """
        -- Refuses a session whose login role may not use ns; names ns for the transaction.
        CREATE FUNCTION settingsd.enter(ns name) RETURNS void
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                \(enterBody)
            END $$;

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

        \(pushFunction)

        -- Tells the namespace's listeners that something changed, after a push committed. Not in
        -- the push: a NOTIFY in the write transaction fails the whole push when the server's
        -- notification queue is full, which any login role can cause by listening in a
        -- transaction it keeps open; failing here costs listeners only the wait for their next
        -- look. The notification carries nothing: a listener learns only that it should pull.
        CREATE FUNCTION settingsd.notify(ns name) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                PERFORM settingsd.enter(ns);
                PERFORM pg_catalog.pg_notify('settingsd_' || c.secret, '')
                    FROM settingsd.channels AS c WHERE c.namespace = ns;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;

        REVOKE ALL ON FUNCTION settingsd.enter(name), settingsd.join(name), settingsd.notify(name),
            \(pushSignature) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.join(name), settingsd.notify(name), \(pushSignature)
            TO settingsd_user;
        """

    /// What `settingsd.enter(ns)` does, for a function to inline where a nested call (which
    /// saves and restores `search_path`) would cost a busy statement a tenth of its time:
    /// refuses the session unless its login role is a member of `ns`, then names `ns` in
    /// `settingsd.writing` for the transaction.
    static let enterBody = """
        IF NOT (\(isMember("session_user", of: "ns")) AND \(notReserved("ns"))) THEN
                    RAISE EXCEPTION 'role % may not use hub namespace %', session_user, ns
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', ns, true);
        """

    /// One push: takes the next hub sequence numbers under the counter row's lock, keeps per key
    /// the higher version, and records how far the pusher pushed, under which incarnation, only
    /// when the counter numbered the batch (or the batch is empty). Returns the number before the
    /// batch's first, NULL when nothing was numbered.
    ///
    /// The pusher names the position it last read or wrote (`expected_seq`, NULL: unchecked); a
    /// record that is not that one fails the whole push with `positionMovedState`, so nothing of
    /// it lands: two live copies of one store file can never both push under its id.
    ///
    /// From schema 16 the push names the key the pusher seals with (NULL: none) and fails with
    /// `sealChangedState` unless it is the namespace's (`checksSeal`): nothing plain lands in a
    /// sealed namespace, nothing sealed under a key the others left behind.
    private static let pushFunction = pushFunction(checksSeal: false)

    static func pushFunction(checksSeal: Bool) -> String {
        """
        CREATE FUNCTION settingsd.push(ns name, \(checksSeal ? "sealed_under text, " : "")pusher bytea, pushed_through bigint,
                new_keys text[], new_values bytea[], new_stamps bigint[], new_writers bytea[],
                pusher_incarnation bytea, expected_seq bigint, expected_incarnation bytea)
            RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ DECLARE
                size bigint := coalesce(pg_catalog.cardinality(new_keys), 0);
                base bigint;
                found_seq bigint;
                found_incarnation bytea;
            BEGIN
                PERFORM settingsd.enter(ns);
                \(checksSeal ? sealCheck : "")
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
                END IF;
                IF size = 0 OR base IS NOT NULL THEN
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
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                RETURN base;
            END $$;
        """
    }
}
