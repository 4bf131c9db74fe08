import SettingsStore
import SettingsWire

extension HubSchema {
    /// Schema 10: the same function, columns and meaning, in fewer statements and fewer values.
    ///
    /// Measured against schema 9 with 1,000 rows a pull, PostgreSQL's fixed cost per pull was
    /// 100–180 µs of its CPU, most of it in statements around the rows: the membership check
    /// through two nested functions that each set `search_path` (a configuration save and
    /// restore per call), the counter, then the candidates' count and bytes. Now the check is
    /// inline and the counter and the candidates come from one statement.
    ///
    /// Each row also carries fewer values, sent as NULLs, which cost a length and no output
    /// function: whether the caller pushed the row and whether it is oversize are 1 when true
    /// and NULL when not (read as 0); the counter is on the first row only, which is where
    /// `HubNamespace.pull` has always read it; the candidate count is on the last row only,
    /// the one whose count every build since schema 8 keeps. So builds since schema 8 read the
    /// same batches (`compatibleSince`), and `HubPullTests` checks what a reader sees against
    /// schema 8's rows.
    static let leanPull = """
        \(replacePullHead)
                first_seq bigint;
                final_seq bigint;
            BEGIN
                -- settingsd.enter(ns), inline.
                \(enterBody(refusing: "use", unless: isMember("session_user", of: "ns")))
                -- The counter, and every candidate's value bytes: at least what the budget counts
                -- (it leaves out the caller's own rows and oversize ones), so a batch within it
                -- is within the budget. No counter row (deleted by hand): no rows, as before.
                \(countCandidates)
                IF last IS NULL THEN
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN;
                END IF;
                upto := CASE WHEN after_seq + span < last THEN after_seq + span ELSE 9223372036854775807 END;
                IF found_rows = 0 THEN
                    \(emptyBatch)
                ELSIF found_bytes <= budget THEN
                    RETURN QUERY
                    SELECT CASE WHEN r.oversize THEN NULL ELSE r.key END,
                        CASE WHEN r.oversize OR r.mine THEN NULL ELSE r.value END, r.hlc, r.replica, r.hub_seq,
                        CASE WHEN r.mine THEN 1::bigint END, CASE WHEN r.oversize THEN 1::bigint END,
                        CASE WHEN r.hub_seq = first_seq THEN last END,
                        CASE WHEN r.hub_seq = final_seq THEN found_rows END
                    FROM (\(pullCandidates)) AS r;
                ELSE
                    -- Over the budget: the first row always, then rows while their values fit; where
                    -- the cut falls is known only at the end, so every row carries the count.
                    RETURN QUERY
                    SELECT w.key, w.value, w.hlc, w.replica, w.hub_seq,
                        CASE WHEN w.mine = 1 THEN w.mine END, CASE WHEN w.oversize = 1 THEN w.oversize END,
                        CASE WHEN w.position = 1 THEN last END, found_rows
                    FROM \(budgetWindow)
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        """

    /// Schema 10 and 11's first statement of a pull, in one snapshot: the counter, the number of
    /// candidates after the cursor, their values' bytes and their first and last hub numbers.
    static let countCandidates = """
        SELECT n.last_seq, a.found_rows, a.found_bytes, a.first_seq, a.final_seq
                            INTO last, found_rows, found_bytes, first_seq, final_seq
                            FROM settingsd.namespaces AS n CROSS JOIN LATERAL (
                                SELECT count(*) AS found_rows, coalesce(sum(octet_length(r.value)), 0) AS found_bytes,
                                    min(r.hub_seq) AS first_seq, max(r.hub_seq) AS final_seq
                                FROM (SELECT e.value, e.hub_seq FROM settingsd.entries AS e
                                    WHERE e.namespace = ns AND e.hub_seq > after_seq
                                        AND e.hub_seq <= CASE WHEN after_seq + span < n.last_seq THEN after_seq + span
                                            ELSE 9223372036854775807 END
                                    ORDER BY e.hub_seq LIMIT most) AS r
                            ) AS a
                            WHERE n.namespace = ns;
        """
}
