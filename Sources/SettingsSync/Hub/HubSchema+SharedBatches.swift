import SettingsStore
import SettingsWire

extension HubSchema {
    /// Machines at the same cursor share one packed batch.
    ///
    /// When a namespace changes, every machine on it pulls the same rows: after 1,000 writers,
    /// 10,000 idle machines all sit at the counter from before the burst and ask for the same
    /// 1,000 rows, and PostgreSQL reading, checking and sending them row by row ten thousand
    /// times costs it several times what handing out one packed value does. So the first of them
    /// packs the batch into one value (`PackedBatch` reads it) and keeps it in
    /// `settingsd.batches` under the cursor and the counter it was packed at; the others get it
    /// back as a few stored parts. A batch is kept only while the counter is the one it was
    /// packed at, so it always holds what a fresh pull would: the counter moves with every push,
    /// the next batch packed deletes those before it, and a change to the entries outside the
    /// write functions (a hand edit) forgets them all.
    ///
    /// The packed rows leave nothing to the caller: each says who pushed it, and the link tells
    /// its own rows from that. Batches are kept only where the cursor's window reaches the
    /// counter (a machine caught up, the ones a fleet shares), at most `keptParts` parts a
    /// namespace, in an unlogged table: a crash or a failover empties it, which costs a repack.
    /// A pull whose window ends before the counter (an initial sync) packs its batch and keeps
    /// nothing.
    static let sharedBatches = """
        CREATE UNLOGGED TABLE settingsd.batches (
            namespace name NOT NULL,
            after_seq bigint NOT NULL,
            last_seq bigint NOT NULL,
            most bigint NOT NULL,
            key_cap bigint NOT NULL,
            value_cap bigint NOT NULL,
            budget bigint NOT NULL,
            span bigint NOT NULL,
            candidates bigint NOT NULL,
            part integer NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (namespace, after_seq, last_seq, most, key_cap, value_cap, budget, span, part)
        );
        -- Parts are cut small enough to stay in their row: read from TOAST, a batch cost more than
        -- twice its parts.
        ALTER TABLE settingsd.batches ALTER COLUMN payload SET STORAGE PLAIN;
        ALTER TABLE settingsd.batches ENABLE ROW LEVEL SECURITY;
        ALTER TABLE settingsd.batches FORCE ROW LEVEL SECURITY;
        CREATE POLICY writer ON settingsd.batches TO CURRENT_USER
            USING (namespace OPERATOR(pg_catalog.=) \(writing))
            WITH CHECK (namespace OPERATOR(pg_catalog.=) \(writing));
        -- What settingsd.edited deletes: every namespace's.
        CREATE POLICY forgetting ON settingsd.batches FOR DELETE TO CURRENT_USER
            USING (pg_catalog.current_setting('settingsd.forgetting', true) OPERATOR(pg_catalog.=) 'on');
        REVOKE ALL ON settingsd.batches FROM PUBLIC;

        -- The batch after the cursor packed into one value, with the counter and the candidate
        -- count. STABLE: called from one statement, its statements share that statement's
        -- snapshot, so the counter and the rows agree (a push committing between them would
        -- otherwise give rows numbered past the counter, which a link takes for a hub restored
        -- from a backup).
        CREATE FUNCTION settingsd.pack_batch(ns name, after_seq bigint, most bigint,
                key_cap bigint, value_cap bigint, budget bigint, span bigint)
            RETURNS TABLE (counter bigint, candidate_count bigint, packed bytea)
            LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
            AS $$ DECLARE
                last bigint;
                upto bigint;
                found_rows bigint;
                found_bytes bigint;
                first_seq bigint;
                final_seq bigint;
                rows_packed bytea;
            BEGIN
                -- The counter, and every candidate's value bytes: when they fit the budget (the
                -- common case) the rows come straight from the index; only a batch over it takes
                -- the windowed query that finds where to cut it.
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
                IF last IS NULL THEN
                    RETURN;
                END IF;
                upto := CASE WHEN after_seq + span < last THEN after_seq + span ELSE 9223372036854775807 END;
                IF found_rows = 0 THEN
                    rows_packed := ''::bytea;
                ELSIF found_bytes <= budget THEN
                    SELECT string_agg(\(packedRow), ''::bytea ORDER BY r.hub_seq) INTO rows_packed
                        FROM (\(candidates)) AS r;
                ELSE
                    -- Over the budget: the first row always, then rows while their values fit.
                    SELECT string_agg(\(packedRow), ''::bytea ORDER BY r.hub_seq) INTO rows_packed
                        FROM (SELECT w.* FROM (
                            SELECT c.*, sum(CASE WHEN c.oversize THEN 0 ELSE coalesce(octet_length(c.value), 0) END)
                                    OVER (ORDER BY c.hub_seq) AS running,
                                row_number() OVER (ORDER BY c.hub_seq) AS position
                            FROM (\(candidates)) AS c) AS w
                        WHERE w.position = 1 OR w.running <= budget) AS r;
                END IF;
                RETURN QUERY SELECT last, found_rows, rows_packed;
            END $$;
        REVOKE ALL ON FUNCTION settingsd.pack_batch(name, bigint, bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;

        \(pullBatch)
        REVOKE ALL ON FUNCTION settingsd.pull_batch(name, bigint, bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.pull_batch(name, bigint, bigint, bigint, bigint, bigint, bigint)
            TO settingsd_user;

        -- A change to the entries or counters outside the write functions (by hand, as the owner
        -- or a superuser): no kept batch is known to hold the rows any more, and a link that
        -- compared with the hub before cannot take its agreement on trust (the edits count it
        -- reads with its poll plan moves). The write functions name their namespace in
        -- settingsd.writing and move its counter, which retires its batches. A DELETE, not a
        -- TRUNCATE: until the edit commits, pulls see the old rows and the old batches together,
        -- and wait for no lock.
        CREATE FUNCTION settingsd.edited() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                IF coalesce(pg_catalog.current_setting('settingsd.writing', true), '') = '' THEN
                    PERFORM pg_catalog.set_config('settingsd.forgetting', 'on', true);
                    DELETE FROM settingsd.batches;
                    PERFORM pg_catalog.set_config('settingsd.forgetting', '', true);
                    UPDATE settingsd.meta AS m SET value = (coalesce(\(metaNumber("edits")), 0) + 1)::text
                        WHERE m.name = 'edits';
                END IF;
                RETURN NULL;
            END $$;
        REVOKE ALL ON FUNCTION settingsd.edited() FROM PUBLIC;
        CREATE TRIGGER edited AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON settingsd.entries
            FOR EACH STATEMENT EXECUTE FUNCTION settingsd.edited();
        CREATE TRIGGER edited AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON settingsd.namespaces
            FOR EACH STATEMENT EXECUTE FUNCTION settingsd.edited();
        """

    /// `settingsd.pull_batch`, a link's pull: the batch kept for this cursor at the current
    /// counter, or packed now. One row per part, in order; none when the namespace has no counter
    /// row.
    ///
    /// A pull keeps what it packed only when its window reaches the counter and it is the one
    /// session packing for that cursor (a transaction-scoped advisory lock, taken without
    /// waiting): a member who packed a batch in a transaction she kept open must not make every
    /// other member's pull wait on her. Its cleanup of batches packed at older counters skips
    /// rows another session is deleting: two pulls that deleted the same batches could lock them
    /// in different orders and deadlock. A row skipped is deleted by the session that holds it,
    /// or by a later pull; a batch packed at an older counter is never served meanwhile.
    ///
    /// The membership check is inline (`enterBody`): the pull is the statement a fleet runs most
    /// after the poll.
    ///
    /// From schema 16 the pull names the key the link seals with (NULL: none) and fails with
    /// `sealChangedState` unless it is the namespace's (`checksSeal`).
    static let pullBatch = pullBatch(checksSeal: false)

    static func pullBatch(checksSeal: Bool) -> String {
        """
        CREATE FUNCTION settingsd.pull_batch(ns name, \(checksSeal ? "sealed_under text, " : "")after_seq bigint, most bigint,
                key_cap bigint, value_cap bigint, budget bigint, span bigint)
            RETURNS TABLE (counter bigint, candidate_count bigint, part bytea)
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ DECLARE
                last bigint;
                found_rows bigint;
                rows_packed bytea;
                parts integer;
            BEGIN
                \(enterBody)
                \(checksSeal ? sealCheck : "")
                RETURN QUERY
                    SELECT b.last_seq, b.candidates, b.payload
                    FROM settingsd.batches AS b JOIN settingsd.namespaces AS n
                        ON n.namespace = b.namespace AND n.last_seq = b.last_seq
                    WHERE b.namespace = ns AND b.after_seq = pull_batch.after_seq AND b.most = pull_batch.most
                        AND b.key_cap = pull_batch.key_cap AND b.value_cap = pull_batch.value_cap
                        AND b.budget = pull_batch.budget AND b.span = pull_batch.span
                    ORDER BY b.part;
                IF FOUND THEN
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN;
                END IF;
                SELECT p.counter, p.candidate_count, p.packed INTO last, found_rows, rows_packed
                    FROM settingsd.pack_batch(ns, pull_batch.after_seq, pull_batch.most, pull_batch.key_cap,
                        pull_batch.value_cap, pull_batch.budget, pull_batch.span) AS p;
                IF last IS NULL THEN
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN;
                END IF;
                parts := greatest(1, (octet_length(rows_packed) + \(partBytes - 1)) / \(partBytes));
                IF pull_batch.after_seq + pull_batch.span >= last
                    AND pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended(ns || ':' || pull_batch.after_seq::text, 0)) THEN
                    -- Batches packed at an older counter can never be served again.
                    DELETE FROM settingsd.batches AS b WHERE b.ctid = ANY (ARRAY(
                        SELECT o.ctid FROM settingsd.batches AS o WHERE o.namespace = ns AND o.last_seq < last
                        FOR UPDATE SKIP LOCKED));
                    IF (SELECT count(*) FROM settingsd.batches AS b WHERE b.namespace = ns) + parts <= \(keptParts) THEN
                        INSERT INTO settingsd.batches AS b (namespace, after_seq, last_seq, most, key_cap,
                                value_cap, budget, span, candidates, part, payload)
                            SELECT ns, pull_batch.after_seq, last, pull_batch.most, pull_batch.key_cap,
                                pull_batch.value_cap, pull_batch.budget, pull_batch.span, found_rows, i,
                                substr(rows_packed, i * \(partBytes) + 1, \(partBytes))
                            FROM generate_series(0, parts - 1) AS i
                            ON CONFLICT DO NOTHING;
                    END IF;
                END IF;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                RETURN QUERY SELECT last, found_rows, substr(rows_packed, i * \(partBytes) + 1, \(partBytes))
                    FROM generate_series(0, parts - 1) AS i ORDER BY i;
            END $$;
        """
    }

    /// The most bytes of a kept batch in one part: its row stays within a page, out of TOAST.
    static let partBytes = 7_800

    /// The most parts a namespace keeps (about 16 MB): room for a fleet's shared batch beside
    /// the few that machines caught mid-burst pack for themselves.
    static let keptParts = 2_048

    /// The candidate rows after the cursor, in hub order, at most `most` and within the window
    /// (`upto`), each with who pushed it and whether it is over the caps.
    private static let candidates = """
        SELECT e.key, e.value, e.hlc, e.replica, e.hub_seq, e.pushed_by,
            octet_length(e.key) > key_cap OR coalesce(octet_length(e.value), 0) > value_cap AS oversize
        FROM settingsd.entries AS e
        WHERE e.namespace = ns AND e.hub_seq > after_seq AND e.hub_seq <= upto
        ORDER BY e.hub_seq LIMIT most
        """

    /// One candidate row `r` in `PackedBatch`'s layout (its documentation has the byte map).
    private static let packedRow = """
        pg_catalog.int8send(r.hub_seq) || pg_catalog.int8send(r.hlc)
                || pg_catalog.set_byte('\\x00'::bytea, 0, CASE WHEN r.oversize THEN 1 ELSE 0 END
                    + CASE WHEN r.value IS NULL THEN 2 ELSE 0 END + CASE WHEN r.pushed_by = r.replica THEN 4 ELSE 0 END)
                || pg_catalog.int4send(octet_length(r.replica)) || r.replica
                || CASE WHEN r.pushed_by = r.replica THEN ''::bytea
                    ELSE pg_catalog.int4send(octet_length(r.pushed_by)) || r.pushed_by END
                || CASE WHEN r.oversize THEN ''::bytea
                    ELSE pg_catalog.int4send(octet_length(pg_catalog.convert_to(r.key, 'UTF8')))
                        || pg_catalog.convert_to(r.key, 'UTF8')
                        || coalesce(pg_catalog.int4send(octet_length(r.value)) || r.value, ''::bytea) END
        """
}
