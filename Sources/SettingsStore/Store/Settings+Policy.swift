extension Settings {
    /// Where a key's effective value comes from.
    public enum ValueSource: Sendable, Equatable, CustomStringConvertible {
        /// A lock in this `locks.d` file pins it (to the system default, else the schema default).
        case locked(file: String)
        /// The value stored on this replica (written here or synced).
        case user
        /// A system default in this `defaults.d` file.
        case systemDefault(file: String)
        /// A default registered by the app (`register(defaults:)`).
        case registeredDefault
        /// The default of this schema file.
        case schemaDefault(file: String)
        /// Nothing: the key has no value.
        case unset

        /// A phrase for `describe` and `get --explain`.
        public var description: String {
            switch self {
            case .locked(let file): "locked by \(file)"
            case .user: "the user's value"
            case .systemDefault(let file): "system default from \(file)"
            case .registeredDefault: "a default registered by the app"
            case .schemaDefault(let file): "schema default from \(file)"
            case .unset: "unset"
            }
        }
    }

    /// The schemas, system defaults and locks in force.
    public var policy: SettingsPolicy {
        cache.withLock { $0.policy }
    }

    /// Where `key`'s effective value (`value(forKey:)`) comes from.
    public func source(ofKey key: String) -> ValueSource {
        cache.withLock {
            $0.resolve(key, stored: $0.entries[key]?.value, registered: $0.defaults[key]).source
        }
    }

    /// Replaces the schemas, system defaults and locks (after the administrator changed them),
    /// and announces every key whose effective value changed, with reason `system`.
    public func apply(_ policy: SettingsPolicy) {
        writer.withLock { _ in
            let changes = cache.withLock { cache -> [SettingsChange.KeyChange] in
                let old = cache.policy
                var keys = Set(old.systemDefaults.keys).union(policy.systemDefaults.keys)
                for rule in old.schema.rules + policy.schema.rules where !rule.isPattern {
                    keys.insert(rule.key)
                }
                let locks = old.locks + policy.locks
                if !locks.isEmpty {
                    for key in cache.entries.keys where locks.contains(where: { $0.covers(key) }) {
                        keys.insert(key)
                    }
                    keys.formUnion(locks.map(\.key).filter { !$0.hasSuffix(".") })
                }
                let before = keys.map { ($0, cache.value(forKey: $0)) }
                let scopesChanged =
                    old.schema.rules.filter { $0.scope == .local }
                    != policy.schema.rules.filter { $0.scope == .local }
                cache.policy = policy
                if scopesChanged { cache.recomputeFingerprints() }
                let replica = identity.withLock { $0 }
                return before.compactMap { key, previous in
                    let current = cache.value(forKey: key)
                    guard current != previous else { return nil }
                    let version =
                        cache.entries[key]?.version ?? SettingVersion(timestamp: .zero, replica: replica)
                    return SettingsChange.KeyChange(key: key, value: current, version: version)
                }
            }
            guard !changes.isEmpty else { return }
            observers.enqueue(
                SettingsChange(
                    reason: .system, origin: identity.withLock { $0 },
                    changes: changes.sorted { $0.key < $1.key }))
        }
        observers.deliverPending()
    }
}
