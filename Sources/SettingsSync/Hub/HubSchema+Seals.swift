import SettingsStore
import SettingsWire

extension HubSchema {
    /// `settingsd.push`'s signature from schema 16, as `GRANT` and `REVOKE` name it.
    static let sealedPushSignature =
        "settingsd.push(name, text, bytea, bigint, text[], bytea[], bigint[], bytea[], bytea, bigint, bytea)"
    /// `settingsd.pull_batch`'s signatures before and from schema 16.
    static let pullSignature = "settingsd.pull_batch(name, bigint, bigint, bigint, bigint, bigint, bigint)"
    static let sealedPullSignature =
        "settingsd.pull_batch(name, text, bigint, bigint, bigint, bigint, bigint, bigint)"

    /// Schema 16: seal records (end-to-end encryption, `SealRecord`). A namespace with a row in
    /// `settingsd.seals` holds only entries sealed under its key: every push and pull names the
    /// key its link seals with and fails unless it is the namespace's, so a machine that would
    /// push in the clear (or under a key the others left behind) is stopped by the hub too. A
    /// build before 16 does not name one, so a hub at 16 serves no earlier build.
    static let seals = Migration(
        version: 16,
        sql: """
            -- The seal record of each sealed namespace: the id of the key its entries are sealed
            -- under, and the record (the salt of a key derived from a passphrase, a tag keyed with
            -- the key). Whether to seal is each machine's decision; the hub only holds every push
            -- and pull to the key named here.
            CREATE TABLE settingsd.seals (
                namespace name PRIMARY KEY,
                key_id text NOT NULL,
                record bytea NOT NULL,
                sealed_at timestamptz NOT NULL DEFAULT now()
            );
            \(guarding("seals"))

            -- Seals the namespace under new_key (its record new_record) when it is still sealed
            -- under expected_key (NULL: plain); returns whether it did. Sealing a plain namespace
            -- deletes its rows (and the batches packed from them) in the same transaction: the
            -- machine sealing it pulled them first and pushes them again sealed. Under the counter
            -- row's lock, so it waits for pushes in flight and two machines never seal at once.
            CREATE FUNCTION settingsd.seal(ns name, new_key text, new_record bytea, expected_key text)
                RETURNS boolean
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
                AS $$ DECLARE found text;
                BEGIN
                    \(enterBody)
                    PERFORM 1 FROM settingsd.namespaces AS n WHERE n.namespace = ns FOR UPDATE;
                    SELECT s.key_id INTO found FROM settingsd.seals AS s WHERE s.namespace = ns;
                    IF found IS DISTINCT FROM expected_key OR new_key IS NULL OR new_record IS NULL THEN
                        PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                        RETURN false;
                    END IF;
                    IF expected_key IS NULL THEN
                        DELETE FROM settingsd.entries AS e WHERE e.namespace = ns;
                        DELETE FROM settingsd.batches AS b WHERE b.namespace = ns;
                    END IF;
                    INSERT INTO settingsd.seals AS s (namespace, key_id, record) VALUES (ns, new_key, new_record)
                        ON CONFLICT (namespace) DO UPDATE
                            SET key_id = excluded.key_id, record = excluded.record, sealed_at = now();
                    PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                    RETURN true;
                END $$;
            REVOKE ALL ON FUNCTION settingsd.seal(name, text, bytea, text) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION settingsd.seal(name, text, bytea, text) TO settingsd_user;

            DROP FUNCTION \(pushSignature);
            \(pushFunction(checksSeal: true))
            REVOKE ALL ON FUNCTION \(sealedPushSignature) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION \(sealedPushSignature) TO settingsd_user;

            DROP FUNCTION \(pullSignature);
            \(pullBatch(checksSeal: true))
            REVOKE ALL ON FUNCTION \(sealedPullSignature) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION \(sealedPullSignature) TO settingsd_user;
            """)
}
