import SettingsStore
import SettingsWire

extension HubSchema {
    /// The functions that read: whether a role may use a namespace, its counter (the poll, as a
    /// statement and as a fast-path call), its poll plan, and its digest and bucket sums.
    ///
    /// The counter's functions run as their caller, so row-level security decides (one row);
    /// PL/pgSQL keeps their plan for the server session, which a pooler hands from client to
    /// client, so a poll is not planned anew. The sums run as the owner after one membership
    /// check: read by the caller, row-level security would ask it of every row (about 1.5 µs
    /// each, several times what summing the row costs).
    static let readFunctions = """
        -- Whether the current role may use a namespace.
        CREATE FUNCTION settingsd.visible(namespace name) RETURNS boolean
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ SELECT \(isMember("current_user", of: "namespace")) AND \(notReserved("namespace")) $$;

        -- A namespace's counter; NULL when the caller may not see it (or it has none).
        CREATE FUNCTION settingsd.counter(namespace name) RETURNS bigint
            LANGUAGE plpgsql STABLE
            AS $$ BEGIN
                RETURN (SELECT n.last_seq FROM settingsd.namespaces AS n
                    WHERE n.namespace OPERATOR(pg_catalog.=) counter.namespace);
            END $$;

        -- A polling link's poll through PostgreSQL's fast-path interface: 0 while the namespace's
        -- counter is still the one the link holds, 1 once it is not (a namespace it may not see,
        -- or without a counter, counts as 0). The answer is an integer, the only result a
        -- fast-path call hands back without copying the hub's bytes into a buffer of the
        -- caller's choosing.
        CREATE FUNCTION settingsd.moved(namespace name, counter bigint) RETURNS integer
            LANGUAGE plpgsql STABLE
            AS $$ BEGIN
                RETURN CASE WHEN coalesce((SELECT n.last_seq FROM settingsd.namespaces AS n
                        WHERE n.namespace OPERATOR(pg_catalog.=) moved.namespace), 0) OPERATOR(pg_catalog.=) moved.counter
                    THEN 0 ELSE 1 END;
            END $$;

        \(pollPlan)

        CREATE FUNCTION settingsd.digest(ns name) RETURNS TABLE (high bigint, middle bigint, low bigint, total bigint)
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                PERFORM settingsd.enter(ns);
                RETURN QUERY SELECT \(partialSums), count(*)::bigint
                    FROM settingsd.entries AS e WHERE e.namespace = ns;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        CREATE FUNCTION settingsd.bucket_sums(ns name) RETURNS TABLE (bucket bigint, high bigint, middle bigint, low bigint)
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                PERFORM settingsd.enter(ns);
                RETURN QUERY SELECT ((e.fp >> 52) & 4095)::bigint, \(partialSums)
                    FROM settingsd.entries AS e WHERE e.namespace = ns GROUP BY 1;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;

        REVOKE ALL ON FUNCTION settingsd.visible(name), settingsd.counter(name), settingsd.moved(name, bigint),
            settingsd.poll_plan(name, bytea), settingsd.digest(name), settingsd.bucket_sums(name) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.visible(name), settingsd.counter(name), settingsd.moved(name, bigint),
            settingsd.poll_plan(name, bytea), settingsd.digest(name), settingsd.bucket_sums(name) TO settingsd_user;
        """

    /// `settingsd.poll_plan(ns, replica)`: what a polling link derives its interval from
    /// (`HubPollPlan`), with the mark that tells it whether the hub changed since a comparison:
    /// the namespace's counter, the hub's count of edits by hand, the replicas the namespace saw
    /// in the last week, and the hub's poll rate. It also says the caller is here, once a day
    /// (a reader that never pushes would otherwise drop out of the count).
    ///
    /// Counting a namespace's replicas reads all its records (a few milliseconds at 10,000), so
    /// the count is kept in `settingsd.fleets` and made again at most once a minute, by the one
    /// session that takes the namespace's advisory lock without waiting; the others read the
    /// count kept. A namespace never counted has no count to fall back on: from schema 18 every
    /// session counts it then (`countsFirstCall`), where before, one that lost the lock to a
    /// session counting at the same moment was told no replicas at all.
    private static let pollPlan = pollPlan(countsFirstCall: false)

    static func pollPlan(countsFirstCall: Bool) -> String {
        let due =
            countsFirstCall
            ? "counted IS NULL OR (counted < now() - interval '1 minute' AND pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended('settingsd.fleets:' || ns, 0)))"
            : "(counted IS NULL OR counted < now() - interval '1 minute') AND pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended('settingsd.fleets:' || ns, 0))"
        return """
            CREATE \(countsFirstCall ? "OR REPLACE " : "")FUNCTION settingsd.poll_plan(ns name, caller bytea)
                RETURNS TABLE (counter bigint, edits bigint, replicas bigint, rate bigint)
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
                AS $$ DECLARE
                    seen bigint;
                    counted timestamptz;
                BEGIN
                    PERFORM settingsd.enter(ns);
                    UPDATE settingsd.replicas AS r SET last_seen = now()
                        WHERE r.namespace = ns AND r.replica = caller AND r.last_seen < now() - interval '1 day';
                    SELECT f.replicas, f.counted_at INTO seen, counted FROM settingsd.fleets AS f WHERE f.namespace = ns;
                    IF \(due) THEN
                        SELECT count(*) INTO seen FROM settingsd.replicas AS r
                            WHERE r.namespace = ns AND r.last_seen > now() - interval '7 days';
                        INSERT INTO settingsd.fleets AS f (namespace, replicas, counted_at) VALUES (ns, seen, now())
                            ON CONFLICT (namespace) DO UPDATE SET replicas = excluded.replicas, counted_at = excluded.counted_at;
                    END IF;
                    RETURN QUERY SELECT n.last_seq, \(metaNumber("edits")), coalesce(seen, 0), \(metaNumber("poll_rate"))
                        FROM settingsd.namespaces AS n WHERE n.namespace = ns;
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                END $$;
            """
    }

    /// The number in `settingsd.meta` under `name`, NULL unless it is one (a value edited by
    /// hand fails nobody's statement).
    static func metaNumber(_ name: String) -> String {
        """
        (SELECT CASE WHEN m.value ~ '^[0-9]{1,18}$' THEN CAST(m.value AS bigint) END
                        FROM settingsd.meta AS m WHERE m.name = '\(name)')
        """
    }

    /// A sum of fingerprints as three sums of 32- and 16-bit pieces, each `int4`, which
    /// PostgreSQL adds in machine integers (summing the `bigint` itself takes `numeric`, twice as
    /// slow on a million rows); `HubNamespace` puts them back together modulo 2^64.
    static let partialSums = """
        coalesce(sum(CAST(e.fp >> 32 AS int4)), 0)::bigint,
            coalesce(sum(CAST((e.fp >> 16) & 65535 AS int4)), 0)::bigint,
            coalesce(sum(CAST(e.fp & 65535 AS int4)), 0)::bigint
        """
}
