extension ReplicaCache {
    /// Puts `new` in force and returns the keys whose effective value changed (versioned by
    /// their entry, or by `replica` at time zero for a key with no entry), sorted, and whether
    /// any key's scope changed (which changes what the digest covers).
    mutating func replacePolicy(with new: SettingsPolicy, replica: ReplicaID)
        -> (changes: [SettingsChange.KeyChange], scopesChanged: Bool)
    {
        let old = policy
        var keys = Set(old.systemDefaults.keys).union(new.systemDefaults.keys)
            .union(old.fleet.settings.keys).union(new.fleet.settings.keys)
        for rule in old.schema.rules + new.schema.rules where !rule.isPattern {
            keys.insert(rule.key)
        }
        let locks = old.locks + new.locks
        if !locks.isEmpty {
            // Both policies' lock indexes: one lookup per stored key, not one per key and lock.
            for key in entries.keys where old.lock(forKey: key) != nil || new.lock(forKey: key) != nil {
                keys.insert(key)
            }
            keys.formUnion(locks.map(\.key).filter { !$0.hasSuffix(".") })
        }
        let before = keys.map { ($0, value(forKey: $0)) }
        let scopesChanged =
            old.schema.rules.filter { $0.scope == .local } != new.schema.rules.filter { $0.scope == .local }
            || old.schema.scopeRules != new.schema.scopeRules
        policy = new
        if scopesChanged { recomputeFingerprints() }
        let changes = before.compactMap { key, previous -> SettingsChange.KeyChange? in
            let current = value(forKey: key)
            guard current != previous else { return nil }
            let version = entries[key]?.version ?? SettingVersion(timestamp: .zero, replica: replica)
            return SettingsChange.KeyChange(key: key, value: current, version: version)
        }
        return (changes.sorted { $0.key < $1.key }, scopesChanged)
    }
}
