import SettingsStore

/// Fleet policies through the link (hub schema 18): read at every connection and whenever the
/// namespace's policy mark moves, applied in one change, recorded for start-ups without the
/// hub, and reported back.
extension HubConnector {
    /// What the link last knew of its policies on this connection.
    struct PolicyFollowing {
        /// Whether the hub keeps policies (schema 18 on).
        let isEnabled: Bool
        /// The namespace's policy mark when the policies were last read.
        var sequence: Int64?
        /// What was last reported, and the policies this build could not read then.
        var reported: Settings.FleetPolicyReport?
        var unreadable: [FleetPolicy.Refusal] = []
    }

    /// Where the store records this link's policies: its namespace (the store's account), so a
    /// machine that reaches its hub by another address (a pooler) keeps them; the address where
    /// the namespace is known only once connected.
    var policySource: String {
        state.withLock { state in
            state.enteredNamespace.map { "hub namespace \($0)" } ?? "hub \(state.status.address)"
        }
    }

    /// Applies the policies this hub last assigned, as the store recorded them: a machine that
    /// starts while its hub is away still holds its organisation's policy.
    func applyRecordedPolicy() {
        do throws(SettingsError) {
            let count = try settings.applyRecordedFleetPolicy(from: policySource)
            if count > 0 {
                logger?.log(
                    .info,
                    "applied \(count) recorded hub polic\(count == 1 ? "y" : "ies") until the hub answers")
            }
        } catch {
            logger?.log(.error, "the recorded hub policy is not applied: \(error.message)")
        }
    }

    /// Reads the policies when the namespace's policy mark (read when `readsMark`) moved since
    /// they were last read, or `always`; applies them and reports. Otherwise reports again only
    /// when what this machine would report changed (its user overrode a recommended key, the
    /// schema moved).
    func followPolicy(
        on hub: HubNamespace, as replica: ReplicaID, following: inout PolicyFollowing, always: Bool = false,
        readsMark: Bool = true
    ) throws(SettingsError) {
        guard following.isEnabled else { return }
        let sequence = always || readsMark ? try hub.policySequence() : following.sequence
        if always || sequence != following.sequence {
            following.sequence = sequence
            let (assignments, unreadable) = try hub.policies(for: replica)
            let before = settings.fleetPolicy
            let applied = try settings.applyFleetPolicy(assignments, from: policySource)
            following.unreadable = unreadable
            if applied.revisions != before.revisions || applied.settings != before.settings {
                logApplied(applied, unreadable: unreadable)
            }
        }
        let report = settings.fleetPolicyReport()
        guard report != following.reported || always else { return }
        try hub.report(report, unreadable: following.unreadable, for: replica)
        following.reported = report
    }

    /// Logs what is in force now, and each key refused.
    private func logApplied(_ applied: FleetPolicy, unreadable: [FleetPolicy.Refusal]) {
        let revisions = applied.revisions.sorted { $0.key < $1.key }.map {
            "'\($0.key)' revision \($0.value)"
        }
        logger?.log(
            .info,
            revisions.isEmpty
                ? "no hub policy reaches this machine now"
                : "applied hub polic\(revisions.count == 1 ? "y" : "ies") \(revisions.joined(separator: ", ")): \(applied.settings.count) key(s), digest \(applied.digest)"
        )
        for refusal in unreadable + applied.refusals {
            logger?.log(
                .warning,
                "hub policy '\(refusal.policy)': \(refusal.key == "*" ? "not applied" : "key '\(refusal.key)' refused"): \(refusal.reason)"
            )
        }
    }
}
