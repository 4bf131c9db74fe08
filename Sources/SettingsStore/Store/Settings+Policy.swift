extension Settings {
    /// Where a key's effective value comes from.
    public enum ValueSource: Sendable, Equatable, CustomStringConvertible {
        /// A lock in this `locks.d` file pins it (to the system default, else the schema default).
        case locked(file: String)
        /// A mandatory value of this hub policy (at this revision) pins it.
        case mandatoryPolicy(name: String, revision: Int64)
        /// The value stored on this replica (written here or synced).
        case user
        /// A system default in this `defaults.d` file.
        case systemDefault(file: String)
        /// A value this hub policy (at this revision) recommends.
        case recommendedPolicy(name: String, revision: Int64)
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
            case .mandatoryPolicy(let name, let revision):
                "mandatory by the hub's policy '\(name)' (revision \(revision))"
            case .user: "the user's value"
            case .systemDefault(let file): "system default from \(file)"
            case .recommendedPolicy(let name, let revision):
                "recommended by the hub's policy '\(name)' (revision \(revision))"
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

    /// Every layer that holds a value for `key`, the winning one first: what `get --explain`
    /// shows the winner overrides.
    public func layers(ofKey key: String) -> [(value: SettingValue?, source: ValueSource)] {
        cache.withLock {
            $0.layers(of: key, stored: $0.entries[key]?.value, registered: $0.defaults[key])
        }
    }

    /// Replaces the schemas, system defaults and locks (after the administrator changed them),
    /// and announces every key whose effective value changed, with reason `system`. The hub's
    /// policies in force stay, composed again under the new schemas.
    public func apply(_ policy: SettingsPolicy) {
        writer.withLock { writer in
            var policy = policy
            policy.fleet = cache.withLock { $0.policy.fleet }.recomposed(
                schema: policy.schema, isStrict: policy.isStrict)
            let change = Commit(
                entries: [], reason: .system, origin: identity.withLock { $0 }, policy: policy)
            finish(change, records: [], writer: writer)
        }
        observers.deliverPending()
    }
}
