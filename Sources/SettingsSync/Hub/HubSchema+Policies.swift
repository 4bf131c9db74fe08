import SettingsStore
import SettingsWire

extension HubSchema {
    /// The role whose members write fleet policies and read every machine's report.
    static let policyAdministrator = "settingsd_policy_admin"

    /// SQL: whether the target text `target` reaches the machine `who` of namespace `ns`.
    static func reaches(_ target: String, machine who: String, namespace ns: String) -> String {
        """
        ((\(target) LIKE 'machine:%' AND pg_catalog.decode(pg_catalog.replace(pg_catalog.substr(\(target), 9), '-', ''), 'hex') = \(who))
                OR (\(target) LIKE 'machine-group:%' AND EXISTS (SELECT FROM settingsd.machine_groups AS g
                    WHERE g.group_name = pg_catalog.substr(\(target), 15) AND g.replica = \(who)))
                OR (\(target) LIKE 'group:%' AND \(isMember(ns, of: "pg_catalog.substr(\(target), 7)"))))
        """
    }

    /// The form a policy target takes on the hub (`PolicyAssignment.Target`'s text).
    static let targetPattern =
        "^(group:.{1,63}|machine-group:.{1,63}|machine:[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})$"

    /// Schema 18: fleet policies (`docs/POLICY.md`). Policies, their revisions and machine groups
    /// are written only through functions that check `settingsd_policy_admin` and read only by
    /// its members; each machine reads the policies that reach it (`machine_policies`) and
    /// reports what it applied (`policy_reports`, guarded like every namespaced table, and
    /// readable by policy administrators). A write moves the counter of every namespace it
    /// reaches (`reach`, recording the number in `policy_seq`), so polling and listening
    /// machines alike find it at their next look and read their policies again. It also makes
    /// the poll plan count a namespace never counted in every session that asks. Only adds: a
    /// hub at 18 serves builds of 16 and 17, which apply no policy.
    static let policies = Migration(
        version: 18,
        sql: """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = '\(policyAdministrator)') THEN
                    CREATE ROLE \(policyAdministrator) NOLOGIN;
                END IF;
            END $$;
            GRANT USAGE ON SCHEMA settingsd TO \(policyAdministrator);
            GRANT SELECT ON settingsd.meta TO \(policyAdministrator);

            -- The counter value of the namespace's last policy change.
            ALTER TABLE settingsd.namespaces ADD COLUMN policy_seq bigint NOT NULL DEFAULT 0;

            -- Each policy in force: its document (a settingsd-policy file), its targets
            -- (group:ROLE, machine-group:NAME, machine:ID) and who wrote its revision.
            CREATE TABLE settingsd.policies (
                policy_name text PRIMARY KEY,
                revision bigint NOT NULL,
                document text NOT NULL,
                targets text[] NOT NULL,
                written_by name NOT NULL,
                written_at timestamptz NOT NULL DEFAULT now()
            );
            -- Every revision ever written; document NULL: the policy was removed.
            CREATE TABLE settingsd.policy_revisions (
                policy_name text NOT NULL,
                revision bigint NOT NULL,
                document text,
                targets text[] NOT NULL,
                written_by name NOT NULL,
                written_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (policy_name, revision)
            );
            CREATE TABLE settingsd.machine_groups (
                group_name text NOT NULL,
                replica bytea NOT NULL,
                PRIMARY KEY (group_name, replica)
            );
            -- What each machine last reported: revisions applied (JSON name → revision), the
            -- digest of its effective policy, keys refused and recommended keys its user
            -- overrode (JSON), when the digest last changed, and when it last reported.
            CREATE TABLE settingsd.policy_reports (
                namespace name NOT NULL,
                replica bytea NOT NULL,
                revisions text NOT NULL,
                digest text NOT NULL,
                refused text NOT NULL,
                overridden text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(),
                reported_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, replica)
            );
            \(guarding("policy_reports"))
            \(["policies", "policy_revisions", "machine_groups"].map(administered).joined(separator: "\n"))
            \(["policy_reports", "namespaces", "replicas", "replica_names"].map(readByAdministrators).joined(separator: "\n"))

            \(policyFunctions)

            -- A namespace never counted is counted by every session that asks (see pollPlan).
            \(pollPlan(countsFirstCall: true))
            """,
        compatibleSince: 16)

    /// Row-level security for a table only policy administrators read and only the owner's
    /// functions write.
    private static func administered(_ table: String) -> String {
        """
        ALTER TABLE settingsd.\(table) ENABLE ROW LEVEL SECURITY;
        ALTER TABLE settingsd.\(table) FORCE ROW LEVEL SECURITY;
        CREATE POLICY administrators ON settingsd.\(table) FOR SELECT TO \(policyAdministrator) USING (true);
        CREATE POLICY owner ON settingsd.\(table) TO CURRENT_USER USING (true) WITH CHECK (true);
        GRANT SELECT ON settingsd.\(table) TO \(policyAdministrator);
        """
    }

    /// Policy administrators read every row of `table` (machines, never entries).
    private static func readByAdministrators(_ table: String) -> String {
        """
        CREATE POLICY administrators ON settingsd.\(table) FOR SELECT TO \(policyAdministrator) USING (true);
        GRANT SELECT ON settingsd.\(table) TO \(policyAdministrator);
        """
    }

    private static let checkAdministrator = """
        IF NOT pg_catalog.pg_has_role(session_user, '\(policyAdministrator)', 'MEMBER') THEN
                    RAISE EXCEPTION 'role % may not write hub policies: an administrator grants it with GRANT \(policyAdministrator) TO "%"',
                        session_user, session_user USING ERRCODE = 'insufficient_privilege';
                END IF;
        """

    private static let policyFunctions = """
        -- Moves the counter of each namespace in reached (in order, so two writers never wait on
        -- each other) and records it as the namespace's policy change.
        CREATE FUNCTION settingsd.reach(reached name[]) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ DECLARE ns name;
            BEGIN
                FOR ns IN SELECT DISTINCT r.n FROM unnest(reached) AS r (n) ORDER BY 1 LOOP
                    PERFORM pg_catalog.set_config('settingsd.writing', ns, true);
                    UPDATE settingsd.namespaces AS n SET last_seq = n.last_seq + 1, policy_seq = n.last_seq + 1
                        WHERE n.namespace = ns;
                END LOOP;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;
        REVOKE ALL ON FUNCTION settingsd.reach(name[]) FROM PUBLIC;

        -- Writes the next revision of policy_name; returns its number. reached: the namespaces
        -- the old and the new targets reach, which the writer read.
        CREATE FUNCTION settingsd.set_policy(policy_name text, new_document text, new_targets text[], reached name[])
            RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ DECLARE next_revision bigint;
            BEGIN
                \(checkAdministrator)
                IF pg_catalog.length(policy_name) NOT BETWEEN 1 AND 128 OR policy_name ~ '[[:cntrl:]]' THEN
                    RAISE EXCEPTION 'a policy name is 1 to 128 characters on one line' USING ERRCODE = 'invalid_parameter_value';
                END IF;
                IF pg_catalog.cardinality(new_targets) NOT BETWEEN 1 AND 1000
                    OR EXISTS (SELECT FROM unnest(new_targets) AS t WHERE t !~ '\(targetPattern)') THEN
                    RAISE EXCEPTION 'policy %: 1 to 1000 targets of group:ROLE, machine-group:NAME or machine:ID', policy_name
                        USING ERRCODE = 'invalid_parameter_value';
                END IF;
                IF pg_catalog.octet_length(new_document) > 16777216 THEN
                    RAISE EXCEPTION 'policy %: a document is at most 16 MiB', policy_name USING ERRCODE = 'invalid_parameter_value';
                END IF;
                LOCK TABLE settingsd.policy_revisions IN SHARE ROW EXCLUSIVE MODE;
                SELECT coalesce(max(r.revision), 0) + 1 INTO next_revision FROM settingsd.policy_revisions AS r
                    WHERE r.policy_name = set_policy.policy_name;
                INSERT INTO settingsd.policies AS p (policy_name, revision, document, targets, written_by)
                    VALUES (set_policy.policy_name, next_revision, new_document, new_targets, session_user)
                    ON CONFLICT ON CONSTRAINT policies_pkey DO UPDATE SET revision = excluded.revision,
                        document = excluded.document, targets = excluded.targets,
                        written_by = excluded.written_by, written_at = now();
                INSERT INTO settingsd.policy_revisions (policy_name, revision, document, targets, written_by)
                    VALUES (set_policy.policy_name, next_revision, new_document, new_targets, session_user);
                PERFORM settingsd.reach(reached);
                RETURN next_revision;
            END $$;

        -- Removes policy_name (its history stays); returns the revision that records it.
        CREATE FUNCTION settingsd.remove_policy(policy_name text, reached name[]) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ DECLARE next_revision bigint; old_targets text[];
            BEGIN
                \(checkAdministrator)
                LOCK TABLE settingsd.policy_revisions IN SHARE ROW EXCLUSIVE MODE;
                DELETE FROM settingsd.policies AS p WHERE p.policy_name = remove_policy.policy_name
                    RETURNING p.targets, p.revision + 1 INTO old_targets, next_revision;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'the hub has no policy %', policy_name USING ERRCODE = 'no_data_found';
                END IF;
                SELECT max(r.revision) + 1 INTO next_revision FROM settingsd.policy_revisions AS r
                    WHERE r.policy_name = remove_policy.policy_name;
                INSERT INTO settingsd.policy_revisions (policy_name, revision, document, targets, written_by)
                    VALUES (remove_policy.policy_name, next_revision, NULL, old_targets, session_user);
                PERFORM settingsd.reach(reached);
                RETURN next_revision;
            END $$;

        -- Makes the machines of machine group group_name exactly members (none: no group).
        CREATE FUNCTION settingsd.set_machine_group(group_name text, members bytea[], reached name[]) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ BEGIN
                \(checkAdministrator)
                IF pg_catalog.length(group_name) NOT BETWEEN 1 AND 63 OR group_name ~ '[[:cntrl:]]' THEN
                    RAISE EXCEPTION 'a machine group name is 1 to 63 characters on one line' USING ERRCODE = 'invalid_parameter_value';
                END IF;
                DELETE FROM settingsd.machine_groups AS g WHERE g.group_name = set_machine_group.group_name;
                INSERT INTO settingsd.machine_groups (group_name, replica)
                    SELECT DISTINCT set_machine_group.group_name, m FROM unnest(members) AS m
                    WHERE pg_catalog.octet_length(m) = 16;
                PERFORM settingsd.reach(reached);
            END $$;

        -- Tells the listeners of each namespace in reached to look (after a policy write
        -- committed; a full notification queue fails only this).
        CREATE FUNCTION settingsd.notify_policy(reached name[]) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ DECLARE ns name;
            BEGIN
                \(checkAdministrator)
                FOR ns IN SELECT DISTINCT r.n FROM unnest(reached) AS r (n) LOOP
                    PERFORM pg_catalog.set_config('settingsd.writing', ns, true);
                    PERFORM pg_catalog.pg_notify('settingsd_' || c.secret, '')
                        FROM settingsd.channels AS c WHERE c.namespace = ns;
                END LOOP;
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;

        -- The policies that reach machine who of namespace ns, each with the most specific of
        -- its targets that does.
        CREATE FUNCTION settingsd.machine_policies(ns name, who bytea)
            RETURNS TABLE (policy_name text, revision bigint, document text, target text)
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ BEGIN
                \(enterBody)
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
                RETURN QUERY
                    SELECT p.policy_name, p.revision, p.document, m.target
                    FROM settingsd.policies AS p
                    CROSS JOIN LATERAL (
                        SELECT t AS target FROM unnest(p.targets) AS t
                        WHERE \(reaches("t", machine: "who", namespace: "ns"))
                        ORDER BY CASE WHEN t LIKE 'machine:%' THEN 0 WHEN t LIKE 'machine-group:%' THEN 1 ELSE 2 END, t
                        LIMIT 1) AS m
                    ORDER BY p.policy_name;
            END $$;

        -- Records what machine who of namespace ns applied.
        CREATE FUNCTION settingsd.report_policy(ns name, who bytea, new_revisions text, new_digest text,
                new_refused text, new_overridden text)
            RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
            AS $$ BEGIN
                \(enterBody)
                IF pg_catalog.octet_length(new_revisions) + pg_catalog.octet_length(new_refused)
                    + pg_catalog.octet_length(new_overridden) + pg_catalog.octet_length(new_digest) > 1048576 THEN
                    RAISE EXCEPTION 'a policy report is at most 1 MiB' USING ERRCODE = 'invalid_parameter_value';
                END IF;
                INSERT INTO settingsd.policy_reports AS r (namespace, replica, revisions, digest, refused, overridden)
                    VALUES (ns, who, new_revisions, new_digest, new_refused, new_overridden)
                    ON CONFLICT (namespace, replica) DO UPDATE SET revisions = excluded.revisions,
                        digest = excluded.digest, refused = excluded.refused, overridden = excluded.overridden,
                        applied_at = CASE WHEN (r.revisions, r.digest) IS DISTINCT FROM (excluded.revisions, excluded.digest)
                            THEN now() ELSE r.applied_at END,
                        reported_at = now();
                PERFORM pg_catalog.set_config('settingsd.writing', '', true);
            END $$;

        REVOKE ALL ON FUNCTION settingsd.set_policy(text, text, text[], name[]),
            settingsd.remove_policy(text, name[]), settingsd.set_machine_group(text, bytea[], name[]),
            settingsd.notify_policy(name[]), settingsd.machine_policies(name, bytea),
            settingsd.report_policy(name, bytea, text, text, text, text) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION settingsd.set_policy(text, text, text[], name[]),
            settingsd.remove_policy(text, name[]), settingsd.set_machine_group(text, bytea[], name[]),
            settingsd.notify_policy(name[]) TO \(policyAdministrator);
        GRANT EXECUTE ON FUNCTION settingsd.machine_policies(name, bytea),
            settingsd.report_policy(name, bytea, text, text, text, text) TO settingsd_user;
        """
}
