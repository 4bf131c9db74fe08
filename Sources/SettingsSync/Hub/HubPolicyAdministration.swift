package import SettingsStore
import SettingsWire

/// What `settingsd hub policy` and `settingsd hub report` do: fleet policies written and read by
/// a member of `settingsd_policy_admin`, and what every machine applied (see `docs/POLICY.md`).
package enum HubPolicyAdministration {
    /// A policy as the hub holds it, or one revision of it (`document` nil: removed).
    package struct Policy: Sendable, Equatable {
        package var name: String
        package var revision: Int64
        package var document: PolicyDocument?
        package var targets: [PolicyAssignment.Target]
        package var writtenBy: String
        /// When, as PostgreSQL prints it.
        package var writtenAt: String
    }

    /// A machine the hub knows: from its pushes, its name or its reports.
    package struct Machine: Sendable, Equatable {
        package var namespace: String
        package var replica: ReplicaID
        package var name: String?
        /// When it was last heard of, as PostgreSQL prints it, and its age in seconds.
        package var lastSeen: String
        package var secondsSinceSeen: Double
    }

    /// What a write would do (`--dry-run`) or did: the revision it makes, each key's change and
    /// the machines it reaches (those of the old and the new targets).
    package struct Plan: Sendable, Equatable {
        package var policy: String
        package var revision: Int64
        package var changes: [PolicyDocument.Change]
        package var machines: [Machine]
        package var isDryRun: Bool
        /// Whether the write removes the policy.
        package var removes = false
    }

    /// Writes `document` as the next revision of policy `name` for `targets` (machines may be
    /// named by name; each must name one machine the hub knows), unless `dryRun`.
    package static func set(
        url: String, name: String, document: PolicyDocument, targets: [String], dryRun: Bool
    ) throws(SettingsError) -> Plan {
        guard !targets.isEmpty else {
            throw SettingsError(
                .invalidValue,
                "policy '\(name)' needs a target: --target ROLE, machine:NAME or machine-group:NAME")
        }
        let connection = try administratorConnection(url)
        let resolved = try targets.map { (text) throws(SettingsError) in try resolve(text, on: connection) }
        let current = try policies(on: connection, named: name).first
        let reachedTargets = Set(resolved + (current?.targets ?? [])).map(\.description)
        let machines = try machinesReached(by: reachedTargets, on: connection)
        let plan = Plan(
            policy: name, revision: 0,
            changes: document.changes(from: current?.document ?? PolicyDocument()), machines: machines,
            isDryRun: dryRun)
        return try carryOut(plan, reaching: reachedTargets, on: connection) { namespaces in
            (
                "SELECT settingsd.set_policy($1, $2, $3::text[], $4::text[]::name[])",
                [
                    .text(name), .text(document.text), .textArray(resolved.map(\.description)),
                    .textArray(namespaces),
                ]
            )
        }
    }

    /// Removes policy `name` (its history stays), unless `dryRun`: every machine it reached
    /// drops its keys, and the users' own values return.
    package static func remove(url: String, name: String, dryRun: Bool) throws(SettingsError) -> Plan {
        let connection = try administratorConnection(url)
        guard let current = try policies(on: connection, named: name).first else {
            throw SettingsError(.invalidValue, "the hub has no policy '\(name)'")
        }
        let machines = try machinesReached(by: current.targets.map(\.description), on: connection)
        let plan = Plan(
            policy: name, revision: 0,
            changes: PolicyDocument().changes(from: current.document ?? PolicyDocument()), machines: machines,
            isDryRun: dryRun, removes: true)
        return try carryOut(plan, reaching: current.targets.map(\.description), on: connection) {
            namespaces in
            ("SELECT settingsd.remove_policy($1, $2::text[]::name[])", [.text(name), .textArray(namespaces)])
        }
    }

    /// `plan` with the revision it makes: for a dry run, the next one; otherwise written by the
    /// statement `write` makes for the namespaces to wake (those `targets` reach), which returns
    /// it, and those namespaces' listeners told.
    private static func carryOut(
        _ plan: Plan, reaching targets: [String], on connection: PostgresConnection,
        _ write: ([String]) -> (sql: String, parameters: [PostgresValue])
    ) throws(SettingsError) -> Plan {
        var plan = plan
        guard !plan.isDryRun else {
            plan.revision = try nextRevision(of: plan.policy, on: connection)
            return plan
        }
        let namespaces = try namespacesReached(by: targets, machines: plan.machines, on: connection)
        let statement = write(namespaces)
        plan.revision = try connection.execute(statement.sql, statement.parameters).int64(0, 0)
        try notify(namespaces, on: connection)
        return plan
    }

    /// Makes `machines` (names or ids) the members of machine group `group`; returns them.
    package static func setGroup(url: String, group: String, machines: [String]) throws(SettingsError)
        -> [Machine]
    {
        let connection = try administratorConnection(url)
        var members: [ReplicaID] = []
        for machine in machines {
            guard case .machine(let replica) = try resolve("machine:\(machine)", on: connection) else {
                continue
            }
            members.append(replica)
        }
        let target = "machine-group:\(group)"
        _ = try PolicyAssignment.Target(parsing: target)
        let before = try machinesReached(by: [target], on: connection)
        let known = try knownMachines(on: connection)
        let after = known.filter { members.contains($0.replica) }
        let namespaces = Array(Set((before + after).map(\.namespace))).sorted()
        try connection.execute(
            "SELECT settingsd.set_machine_group($1, $2, $3::text[]::name[])",
            [.text(group), .bytesArray(members.map(\.bytes)), .textArray(namespaces)])
        try notify(namespaces, on: connection)
        return after
    }

    /// The members of machine group `group`.
    package static func group(url: String, named group: String) throws(SettingsError) -> [Machine] {
        let connection = try administratorConnection(url)
        return try machinesReached(by: ["machine-group:\(group)"], on: connection)
    }

    /// The policies in force, by name; only `name` when given.
    package static func policies(url: String, named name: String? = nil) throws(SettingsError) -> [Policy] {
        try policies(on: try administratorConnection(url), named: name)
    }

    /// Every revision of policy `name`, oldest first.
    package static func history(url: String, name: String) throws(SettingsError) -> [Policy] {
        let connection = try administratorConnection(url)
        let rows = try connection.execute(
            """
            SELECT policy_name, revision, document, array_to_string(targets, E'\\n'), written_by::text, written_at::text
            FROM settingsd.policy_revisions WHERE policy_name = $1 ORDER BY revision
            """, [.text(name)])
        guard rows.count > 0 else { throw SettingsError(.invalidValue, "the hub has no policy '\(name)'") }
        return try (0..<rows.count).map { (row) throws(SettingsError) in try policy(in: rows, row: row) }
    }

    /// The namespaces to wake for a write to `targets`: those of the `machines` they reach, and
    /// every namespace that is a member of a group target, machines seen or not (one that joins
    /// as the write happens reads its policies as it joins).
    private static func namespacesReached(
        by targets: [String], machines: [Machine], on connection: PostgresConnection
    ) throws(SettingsError) -> [String] {
        let rows = try connection.execute(
            """
            SELECT n.namespace::text FROM settingsd.namespaces AS n
            WHERE EXISTS (SELECT FROM unnest($1::text[]) AS t
                WHERE t LIKE 'group:%' AND \(HubSchema.isMember("n.namespace", of: "pg_catalog.substr(t, 7)")))
            """, [.textArray(targets)])
        return Array(Set(machines.map(\.namespace) + (0..<rows.count).map { rows.text($0, 0) })).sorted()
    }

    /// The machines `targets` reach (texts of `PolicyAssignment.Target`), by namespace and name.
    static func machinesReached(by targets: [String], on connection: PostgresConnection) throws(SettingsError)
        -> [Machine]
    {
        try knownMachines(
            on: connection,
            where:
                "EXISTS (SELECT FROM unnest($1::text[]) AS t WHERE \(HubSchema.reaches("t", machine: "k.replica", namespace: "k.namespace")))",
            [.textArray(targets)])
    }

    /// Every machine the hub knows, or those `condition` (over `k.namespace`, `k.replica`)
    /// selects.
    static func knownMachines(
        on connection: PostgresConnection, where condition: String = "true",
        _ parameters: [PostgresValue] = []
    ) throws(SettingsError) -> [Machine] {
        let rows = try connection.execute(
            """
            WITH k AS (
                SELECT s.namespace, s.replica, max(s.seen) AS seen FROM (
                    SELECT r.namespace, r.replica, r.last_seen AS seen FROM settingsd.replicas AS r
                    UNION ALL SELECT m.namespace, m.replica, m.named_at FROM settingsd.replica_names AS m
                    UNION ALL SELECT p.namespace, p.replica, p.reported_at FROM settingsd.policy_reports AS p
                ) AS s GROUP BY s.namespace, s.replica)
            SELECT k.namespace::text, k.replica, m.replica_name, k.seen::text,
                extract(epoch FROM now() - k.seen)::float8::text
            FROM k LEFT JOIN settingsd.replica_names AS m ON m.namespace = k.namespace AND m.replica = k.replica
            WHERE \(condition)
            ORDER BY k.namespace, m.replica_name, k.replica
            """, parameters)
        return (0..<rows.count).compactMap { row in
            ReplicaID(bytes: rows.bytes(row, 1)).map {
                Machine(
                    namespace: rows.text(row, 0), replica: $0,
                    name: rows.isNull(row, 2) ? nil : rows.text(row, 2), lastSeen: rows.text(row, 3),
                    secondsSinceSeen: Double(rows.text(row, 4)) ?? 0)
            }
        }
    }

    /// A connection of a policy administrator, to a hub that keeps policies.
    static func administratorConnection(_ url: String) throws(SettingsError) -> PostgresConnection {
        let connection = try HubAdministration.connect(url)
        let version = try HubSchema.check(connection)
        guard version >= HubSchema.policies.version else {
            throw SettingsError(
                .unsupportedSchema,
                "the hub \(connection.displayName) has schema version \(version), which keeps no policies; upgrade it with 'settingsd hub init URL'"
            )
        }
        let member = try connection.execute(
            "SELECT pg_has_role(current_user, '\(HubSchema.policyAdministrator)', 'MEMBER')::int::bigint")
        guard member.int64(0, 0) == 1 else {
            let role = try connection.execute("SELECT current_user::text").text(0, 0)
            throw SettingsError(
                .accessDenied,
                "the role '\(role)' is not a policy administrator of \(connection.displayName): the hub's owner grants it with GRANT \(HubSchema.policyAdministrator) TO \"\(role)\""
            )
        }
        return connection
    }

    /// `text` as a target, with a machine named by its name resolved to its id.
    private static func resolve(_ text: String, on connection: PostgresConnection) throws(SettingsError)
        -> PolicyAssignment.Target
    {
        guard text.hasPrefix("machine:") else { return try PolicyAssignment.Target(parsing: text) }
        let machine = String(text.dropFirst("machine:".count))
        if let replica = ReplicaID(machine) { return .machine(replica) }
        let known = try knownMachines(
            on: connection, where: "m.replica_name = $1", [.text(machine)])
        guard let first = known.first else {
            throw SettingsError(
                .invalidValue,
                "no machine named '\(machine)' has connected to the hub (name it by its replica id, as its status shows)"
            )
        }
        guard known.count == 1 else {
            throw SettingsError(
                .invalidValue,
                "\(known.count) machines are named '\(machine)' (\(known.map { "\($0.replica) in \($0.namespace)" }.joined(separator: ", "))): name one by its id"
            )
        }
        return .machine(first.replica)
    }

    static func policies(on connection: PostgresConnection, named name: String?) throws(SettingsError)
        -> [Policy]
    {
        let rows = try connection.execute(
            """
            SELECT policy_name, revision, document, array_to_string(targets, E'\\n'), written_by::text, written_at::text
            FROM settingsd.policies WHERE $1::text IS NULL OR policy_name = $1 ORDER BY policy_name
            """, [name.map { .text($0) } ?? .null])
        return try (0..<rows.count).map { (row) throws(SettingsError) in try policy(in: rows, row: row) }
    }

    private static func policy(in rows: PostgresRows, row: Int) throws(SettingsError) -> Policy {
        let name = rows.text(row, 0)
        return Policy(
            name: name, revision: rows.int64(row, 1),
            document: rows.isNull(row, 2)
                ? nil
                : try PolicyDocument(parsing: Array(rows.text(row, 2).utf8), file: "hub policy '\(name)'"),
            targets: try rows.text(row, 3).split(separator: "\n").map { (text) throws(SettingsError) in
                try PolicyAssignment.Target(parsing: String(text))
            },
            writtenBy: rows.text(row, 4), writtenAt: rows.text(row, 5))
    }

    private static func nextRevision(of name: String, on connection: PostgresConnection) throws(SettingsError)
        -> Int64
    {
        let rows = try connection.execute(
            "SELECT coalesce(max(revision), 0) + 1 FROM settingsd.policy_revisions WHERE policy_name = $1",
            [.text(name)])
        return rows.int64(0, 0)
    }

    /// Wakes the listening machines of `namespaces` (after the write committed).
    private static func notify(_ namespaces: [String], on connection: PostgresConnection)
        throws(SettingsError)
    {
        guard !namespaces.isEmpty else { return }
        try connection.execute(
            "SELECT settingsd.notify_policy($1::text[]::name[])", [.textArray(namespaces)])
    }
}
