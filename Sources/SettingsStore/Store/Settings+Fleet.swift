extension Settings {
    /// What a replica tells its hub of the fleet policies it applied (`settingsd hub report`).
    public struct FleetPolicyReport: Sendable, Equatable {
        /// The revision applied, by policy name.
        public var revisions: [String: Int64]
        /// The digest of the effective policy (`FleetPolicy.digest`).
        public var digest: String
        /// The keys refused, with the policy and the reason.
        public var refusals: [FleetPolicy.Refusal]
        /// Recommended keys whose user holds a value of their own, by policy name.
        public var overridden: [String: [String]]

        /// A report of what `fleet` makes effective, with `overridden` keys.
        package init(_ fleet: FleetPolicy, overridden: [String: [String]] = [:]) {
            revisions = fleet.revisions
            digest = fleet.digest
            refusals = fleet.refusals
            self.overridden = overridden
        }
    }

    /// The hub's policies in force.
    public var fleetPolicy: FleetPolicy {
        cache.withLock { $0.policy.fleet }
    }

    /// Puts `assignments` in force as everything `source` (a hub link) assigns this replica:
    /// one change, announced with reason `system`, for every key whose effective value moves; a
    /// policy no longer assigned leaves nothing behind (the user's own values return). The
    /// assignments are recorded durably first, so a replica that starts without its hub
    /// applies them (`applyRecordedFleetPolicy(from:)`).
    ///
    /// - Returns: The composed policy now in force.
    /// - Throws: `io` when the record cannot be written (nothing changes then).
    @discardableResult
    public func applyFleetPolicy(_ assignments: [PolicyAssignment], from source: String)
        throws(SettingsError) -> FleetPolicy
    {
        let sorted = assignments.sorted { ($0.name, $0.revision) < ($1.name, $1.revision) }
        let applied = try writer.withLock { writer throws(SettingsError) -> FleetPolicy in
            let current = cache.withLock { $0.policy }
            // What is in force came from this record, or was recorded as it was put in force.
            guard current.fleet.sources[source] ?? [] != sorted else { return current.fleet }
            if !configuration.isReadOnly {
                let record = sorted.isEmpty ? nil : JSONValue.array(sorted.map(\.json)).serialized()
                try writer.backend?.saveFleetPolicy(record, from: source)
            }
            var policy = current
            policy.fleet = policy.fleet.replacing(
                source, with: sorted, schema: policy.schema, isStrict: policy.isStrict)
            guard policy.fleet != current.fleet else { return policy.fleet }
            let change = Commit(
                entries: [], reason: .system, origin: identity.withLock { $0 }, policy: policy)
            finish(change, records: [], writer: writer)
            return policy.fleet
        }
        observers.deliverPending()
        return applied
    }

    /// Applies the assignments `source` last gave this replica, as recorded: what a replica
    /// does as it starts, before its hub answers. Returns how many were recorded.
    ///
    /// - Throws: `corruptDatabase` when the record cannot be read.
    @discardableResult
    public func applyRecordedFleetPolicy(from source: String) throws(SettingsError) -> Int {
        let text = try writer.withLock { writer throws(SettingsError) in
            try writer.backend?.fleetPolicy(from: source)
        }
        guard let text else { return 0 }
        let assignments: [PolicyAssignment]
        do throws(SettingsError) {
            guard case .array(let items) = try JSONValue.parse(text) else {
                throw SettingsError(.invalidValue, "not an array")
            }
            assignments = try items.map { (item) throws(SettingsError) in try PolicyAssignment(json: item) }
        } catch {
            throw SettingsError(
                .corruptDatabase, "the recorded fleet policy of \(source) cannot be read: \(error.message)")
        }
        try applyFleetPolicy(assignments, from: source)
        return assignments.count
    }

    /// What this replica applied of its fleet policies, for its hub.
    public func fleetPolicyReport() -> FleetPolicyReport {
        cache.withLock { cache in
            let fleet = cache.policy.fleet
            var overridden: [String: [String]] = [:]
            for (key, setting) in fleet.settings where setting.level == .recommended {
                if cache.entries.value(forKey: key) != nil {
                    overridden[setting.policy, default: []].append(key)
                }
            }
            return FleetPolicyReport(fleet, overridden: overridden.mapValues { $0.sorted() })
        }
    }
}
