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
        writer.withLock { writer in
            let change = Commit(
                entries: [], reason: .system, origin: identity.withLock { $0 }, policy: policy)
            finish(change, records: [], writer: writer)
        }
        observers.deliverPending()
    }
}
