import SettingsStore
import SettingsWire

extension HubSchema {
    /// Schema 7: a namespace's digest and bucket sums computed by functions that check the
    /// caller's membership once and then read as the schema's owner. Read by the caller,
    /// row-level security asked its membership of every row (about 1.5 µs each: 0.7–1 s of a
    /// 1M-row namespace's digest, four times what the sum itself costs).
    static let sums = """
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
        REVOKE ALL ON FUNCTION settingsd.digest(name), settingsd.bucket_sums(name) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.digest(name), settingsd.bucket_sums(name) TO settingsd_user;
        """

    /// A sum of fingerprints as three sums of 32- and 16-bit pieces, each `int4`, which
    /// PostgreSQL adds in machine integers (summing the `bigint` itself takes `numeric`, twice as
    /// slow on a million rows); `HubNamespace` puts them back together modulo 2^64.
    static let partialSums = """
        coalesce(sum(CAST(e.fp >> 32 AS int4)), 0)::bigint,
            coalesce(sum(CAST((e.fp >> 16) & 65535 AS int4)), 0)::bigint,
            coalesce(sum(CAST(e.fp & 65535 AS int4)), 0)::bigint
        """
}
