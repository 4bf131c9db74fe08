package import SettingsStore

/// What a machine reads and writes of the hub's fleet policies (schema 18): the namespace's
/// policy mark, the policies that reach it, and its report.
extension HubNamespace {
    /// The counter value of the namespace's last policy change (0: none).
    package func policySequence() throws(SettingsError) -> Int64 {
        let rows = try connection.execute(
            "SELECT policy_seq FROM settingsd.namespaces WHERE namespace = $1", [.text(name)])
        guard rows.count == 1, !rows.isNull(0, 0) else { return 0 }
        return rows.int64(0, 0)
    }

    /// The policies that reach `replica`, each through the most specific of its targets. A
    /// policy whose document or target this build cannot read is left out and returned in
    /// `unreadable` with why (hub input like any other).
    package func policies(for replica: ReplicaID) throws(SettingsError)
        -> (assignments: [PolicyAssignment], unreadable: [FleetPolicy.Refusal])
    {
        let rows = try connection.execute(
            "SELECT policy_name, revision, document, target FROM settingsd.machine_policies($1, $2)",
            [.text(name), .bytes(replica.bytes)])
        var assignments: [PolicyAssignment] = []
        var unreadable: [FleetPolicy.Refusal] = []
        for row in 0..<rows.count {
            let policy = rows.text(row, 0)
            do throws(SettingsError) {
                let revision = rows.int64(row, 1)
                assignments.append(
                    PolicyAssignment(
                        name: policy, revision: revision,
                        target: try PolicyAssignment.Target(parsing: rows.text(row, 3)),
                        document: try PolicyDocument(parsing: Array(rows.text(row, 2).utf8), file: policy)))
            } catch {
                unreadable.append(FleetPolicy.Refusal(key: "*", policy: policy, reason: error.message))
            }
        }
        return (assignments, unreadable)
    }

    /// Records on the hub what `replica` applied: `report`, with `unreadable` policies among
    /// its refusals.
    package func report(
        _ report: Settings.FleetPolicyReport, unreadable: [FleetPolicy.Refusal], for replica: ReplicaID
    ) throws(SettingsError) {
        let refused = (unreadable + report.refusals).prefix(1_000).map { refusal -> JSONValue in
            .object([
                "key": .string(refusal.key), "policy": .string(refusal.policy),
                "reason": .string(String(refusal.reason.prefix(500))),
            ])
        }
        try connection.execute(
            "SELECT settingsd.report_policy($1, $2, $3, $4, $5, $6)",
            [
                .text(name), .bytes(replica.bytes),
                .text(JSONValue.object(report.revisions.mapValues { .integer($0) }).serialized()),
                .text(report.digest), .text(JSONValue.array(Array(refused)).serialized()),
                .text(
                    JSONValue.object(
                        report.overridden.mapValues { .array($0.prefix(1_000).map { .string($0) }) }
                    )
                    .serialized()),
            ])
    }
}
