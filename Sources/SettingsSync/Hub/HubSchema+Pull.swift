import SettingsStore
import SettingsWire

extension HubSchema {
    /// Schema 8: a link's pull is a function that checks the caller's membership once and then
    /// reads as the schema's owner, as schema 7 made the digest. Read by the caller, row-level
    /// security asked its membership of every row pulled (about 1.5 µs each): when a thousand
    /// writers changed the namespace, 10,000 machines pulling their rows made ten million such
    /// questions. The function's plan is also kept by the server session that runs it, where a
    /// link through a pooler in transaction pooling sent the whole statement to be parsed and
    /// planned on every pull.
    ///
    /// The columns are the pull statement's, in its order (`HubNamespace.pull` reads them by
    /// position): the key and the value (NULL when the row is oversize, the value also when the
    /// caller pushed the row), the version, the hub number, whether the caller pushed it and
    /// whether it is oversize (as 0 or 1), the counter, and how many rows were candidates.
    /// An empty batch is one row with the counter alone.
    ///
    /// `enter` now says "use", not "write": the reading functions check membership with it too.
    static let pull = """
        \(enterFunction(refusing: "use", replacing: true))
        CREATE FUNCTION settingsd.pull(ns name, after_seq bigint, most bigint, puller bytea,
                key_cap bigint, value_cap bigint, budget bigint, span bigint)
            RETURNS TABLE (pulled_key text, pulled_value bytea, pulled_hlc bigint, pulled_replica bytea,
                pulled_seq bigint, pulled_mine bigint, pulled_oversize bigint, counter bigint,
                candidate_count bigint)
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                PERFORM settingsd.enter(ns);
                RETURN QUERY
                SELECT b.key, b.value, b.hlc, b.replica, b.hub_seq, b.mine, b.oversize, c.last_seq, b.candidates
                FROM (SELECT n.last_seq FROM settingsd.namespaces AS n WHERE n.namespace = ns) AS c
                LEFT JOIN LATERAL (
                    SELECT w.key, w.value, w.hlc, w.replica, w.hub_seq, w.mine, w.oversize, w.candidates FROM (
                        SELECT CASE WHEN r.oversize THEN NULL ELSE r.key END AS key,
                            CASE WHEN r.oversize OR r.mine THEN NULL ELSE r.value END AS value, r.hlc, r.replica,
                            r.hub_seq, r.mine::int::bigint AS mine, r.oversize::int::bigint AS oversize,
                            sum(CASE WHEN r.oversize OR r.mine THEN 0 ELSE coalesce(octet_length(r.value), 0) END)
                                OVER (ORDER BY r.hub_seq) AS running,
                            row_number() OVER (ORDER BY r.hub_seq) AS position,
                            count(*) OVER () AS candidates
                        FROM (
                            SELECT e.key, e.value, e.hlc, e.replica, e.hub_seq, e.pushed_by = puller AS mine,
                                octet_length(e.key) > key_cap OR coalesce(octet_length(e.value), 0) > value_cap
                                    AS oversize
                            FROM settingsd.entries AS e
                            WHERE e.namespace = ns AND e.hub_seq > after_seq
                                AND e.hub_seq <= CASE WHEN after_seq + span < c.last_seq THEN after_seq + span
                                    ELSE 9223372036854775807 END
                            ORDER BY e.hub_seq LIMIT most) AS r
                    ) AS w
                    WHERE w.position = 1 OR w.running <= budget
                ) AS b ON true
                ORDER BY b.hub_seq;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        REVOKE ALL ON FUNCTION settingsd.pull(name, bigint, bigint, bytea, bigint, bigint, bigint, bigint) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.pull(name, bigint, bigint, bytea, bigint, bigint, bigint, bigint)
            TO settingsd_user;
        """

    /// Schema 9: the same function, the same columns and the same rows, in about half of schema
    /// 8's server time. Schema 8 numbered, summed and counted every candidate row with three
    /// window aggregates (about 1.1 µs a row of PostgreSQL's CPU: when a thousand writers changed
    /// a namespace, 10,000 machines pulling a thousand rows each spent 11 s of it on them). Now
    /// one aggregate counts the candidates and sums their values' bytes, and when those fit the
    /// byte budget (the common case: a budget of 8 MiB) the rows come straight from the index;
    /// only a batch over it takes the windowed query to find where to cut it.
    ///
    /// The function is STABLE, so its statements share the calling statement's snapshot: the
    /// counter and the rows agree, as in schema 8's one query (a volatile function reads each in
    /// a snapshot of its own, and a push committing between them would give rows numbered past
    /// the counter, which a link takes for a hub restored from a backup).
    ///
    /// Nothing a link sees changed, so this build also works with a hub still at schema 8
    /// (`compatibleSince`); builds for schema 8 predate that and refuse a hub at 9 as newer.
    static let pullByBudget = """
        \(replacePullHead)
            BEGIN
                PERFORM settingsd.enter(ns);
                SELECT n.last_seq INTO last FROM settingsd.namespaces AS n WHERE n.namespace = ns;
                IF last IS NULL THEN
                    -- No counter row (deleted by hand): no rows, as schema 8's join gave.
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN;
                END IF;
                upto := CASE WHEN after_seq + span < last THEN after_seq + span ELSE 9223372036854775807 END;
                -- Every value's bytes: at least what the budget counts (it leaves out the caller's
                -- own rows and oversize ones), so a batch within it is within the budget.
                SELECT count(*), coalesce(sum(octet_length(r.value)), 0) INTO found_rows, found_bytes
                    FROM (SELECT e.value FROM settingsd.entries AS e
                        WHERE e.namespace = ns AND e.hub_seq > after_seq AND e.hub_seq <= upto
                        ORDER BY e.hub_seq LIMIT most) AS r;
                IF found_rows = 0 THEN
                    \(emptyBatch)
                ELSIF found_bytes <= budget THEN
                    RETURN QUERY
                    SELECT CASE WHEN r.oversize THEN NULL ELSE r.key END,
                        CASE WHEN r.oversize OR r.mine THEN NULL ELSE r.value END, r.hlc, r.replica,
                        r.hub_seq, r.mine::int::bigint, r.oversize::int::bigint, last, found_rows
                    FROM (\(pullCandidates)) AS r;
                ELSE
                    -- Over the budget: the first row always, then rows while their values fit.
                    RETURN QUERY
                    SELECT w.key, w.value, w.hlc, w.replica, w.hub_seq, w.mine, w.oversize, last, found_rows
                    FROM \(budgetWindow)
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        """

    /// The head of schemas 9 and 10's `settingsd.pull`: schema 8's signature, kept so that
    /// builds since read them alike, and the variables both declare.
    static let replacePullHead = """
        CREATE OR REPLACE FUNCTION settingsd.pull(ns name, after_seq bigint, most bigint, puller bytea,
                key_cap bigint, value_cap bigint, budget bigint, span bigint)
            RETURNS TABLE (pulled_key text, pulled_value bytea, pulled_hlc bigint, pulled_replica bytea,
                pulled_seq bigint, pulled_mine bigint, pulled_oversize bigint, counter bigint,
                candidate_count bigint)
            LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ DECLARE
                last bigint;
                upto bigint;
                found_rows bigint;
                found_bytes bigint;
        """

    /// Schemas 9 and 10's rows of a batch over its byte budget, as `w`: the candidates with a
    /// running sum of the values' bytes and their position, the first always and then those
    /// within the budget, in hub order.
    static let budgetWindow = """
        (
                            SELECT CASE WHEN r.oversize THEN NULL ELSE r.key END AS key,
                                CASE WHEN r.oversize OR r.mine THEN NULL ELSE r.value END AS value, r.hlc, r.replica,
                                r.hub_seq, r.mine::int::bigint AS mine, r.oversize::int::bigint AS oversize,
                                sum(CASE WHEN r.oversize OR r.mine THEN 0 ELSE coalesce(octet_length(r.value), 0) END)
                                    OVER (ORDER BY r.hub_seq) AS running,
                                row_number() OVER (ORDER BY r.hub_seq) AS position
                            FROM (\(pullCandidates)) AS r
                        ) AS w
                        WHERE w.position = 1 OR w.running <= budget
                        ORDER BY w.hub_seq;
        """

    /// Schemas 9 and 10's answer when no row follows the cursor: one row with the counter alone.
    static let emptyBatch = """
        RETURN QUERY SELECT NULL::text, NULL::bytea, NULL::bigint, NULL::bytea, NULL::bigint,
                            NULL::bigint, NULL::bigint, last, NULL::bigint;
        """

    /// Schema 9's candidate rows: the window after the cursor in hub order, each with whether
    /// the caller pushed it and whether it is over the caps.
    static let pullCandidates = """
        SELECT e.key, e.value, e.hlc, e.replica, e.hub_seq, e.pushed_by = puller AS mine,
            octet_length(e.key) > key_cap OR coalesce(octet_length(e.value), 0) > value_cap AS oversize
        FROM settingsd.entries AS e
        WHERE e.namespace = ns AND e.hub_seq > after_seq AND e.hub_seq <= upto
        ORDER BY e.hub_seq LIMIT most
        """
}
