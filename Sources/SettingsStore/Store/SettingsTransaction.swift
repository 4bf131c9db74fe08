/// The writes of one `Settings.transaction { }`: committed together, announced as one change.
///
/// Reads see the transaction's own writes. Use it only inside the closure it was passed to,
/// and do not call the store itself from there: the transaction holds the store's writer lock.
public final class SettingsTransaction {
    let settings: Settings
    /// The store's policy when the transaction began (it changes only under the writer lock the
    /// transaction holds).
    private let policy: SettingsPolicy
    /// Every write in order, repeats included; `latestWrites()` keeps the last one per key.
    private var log: [PendingWrite] = []
    /// Who the following writes are for, as the history records it (this process by default; the
    /// daemon sets each client's in turn).
    package var actor: ChangeActor? = ChangeActor.current
    /// The last position of each key in `log[..<indexed]`, built only when the transaction reads:
    /// a write-only batch never pays for a growing dictionary.
    private var positions: [String: Int] = [:]
    private var indexed = 0

    package init(settings: Settings) {
        self.settings = settings
        self.policy = settings.cache.withLock { $0.policy }
    }

    /// The value `key` will have after this transaction: written here, stored, or the default.
    public func value(forKey key: String) -> SettingValue? {
        if let position = latestPosition(of: key) {
            guard let value = log[position].value else {
                return settings.cache.withLock {
                    $0.resolve(key, stored: nil, registered: $0.defaults[key]).value
                }
            }
            return value
        }
        return settings.value(forKey: key)
    }

    private func latestPosition(of key: String) -> Int? {
        while indexed < log.count {
            positions[log[indexed].key] = indexed
            indexed += 1
        }
        return positions[key]
    }

    /// The writes to commit: the last one for each key, in the order of those last writes.
    func latestWrites() -> [PendingWrite] {
        guard log.count > 1 else { return log }
        // Most batches write each key once: a set of the keys' hashes proves it, and only a
        // batch with a hash seen twice pays for a table of the keys themselves.
        guard KeyIdentity.hasRepeats(log.lazy.map(\.key)) else { return log }
        var latest: [String: Int] = [:]
        latest.reserveCapacity(log.count)
        for (position, write) in log.enumerated() { latest[write.key] = position }
        guard latest.count < log.count else { return log }
        return log.enumerated().compactMap { position, write in
            latest[write.key] == position ? write : nil
        }
    }

    /// Stores `value` for `key` when the transaction commits; `nil` removes the key.
    public func set<Value: SettingValueConvertible>(_ value: Value, forKey key: String) throws(SettingsError)
    {
        let stored: SettingValue?
        do {
            stored = try value.settingValue()
        } catch {
            throw error.with(key: key)
        }
        try record(key, stored)
    }

    /// Removes `key` when the transaction commits.
    ///
    /// - Throws: `SettingsError` with code `invalidKey` or `limitExceeded` for a key no write
    ///   could have stored (removing a key that is simply unset is not an error).
    public func removeValue(forKey key: String) throws(SettingsError) {
        try record(key, nil)
    }

    /// Writes `values`, in key order; with `replacingExisting`, removes the stored keys not in
    /// `values` (only those under one of `prefixes`, when it names any). Values identical to the
    /// stored ones change nothing.
    ///
    /// Locked keys are left as they are, neither written nor removed, so that a backup made
    /// anywhere restores on a managed machine.
    ///
    /// - Returns: The locked keys that were skipped, sorted.
    @discardableResult
    public func importValues(
        _ values: [String: SettingValue], replacingExisting: Bool, under prefixes: [String] = []
    ) throws(SettingsError) -> [String] {
        var skipped: Set<String> = []
        if replacingExisting {
            let scope =
                prefixes.isEmpty ? settings.keys() : prefixes.flatMap { settings.keys(withPrefix: $0) }
            for key in scope where values[key] == nil {
                guard !isLocked(key) else {
                    skipped.insert(key)
                    continue
                }
                try removeValue(forKey: key)
            }
        }
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard !isLocked(key) else {
                // An unchanged value is no write at all: only a value the lock keeps out is named.
                if settings.storedValue(forKey: key) != value { skipped.insert(key) }
                continue
            }
            try set(value, forKey: key)
        }
        return skipped.sorted()
    }

    /// Writes `values` back (nil: a removal), in key order; under a prefix (`keyOrPrefix` ending
    /// in `.`) locked keys are skipped, one locked key is refused.
    ///
    /// - Returns: The locked keys skipped, sorted.
    package func restore(_ values: [String: SettingValue?], under keyOrPrefix: String) throws(SettingsError)
        -> [String]
    {
        var skipped: [String] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            if keyOrPrefix.hasSuffix("."), isLocked(key) {
                skipped.append(key)
                continue
            }
            if let value { try set(value, forKey: key) } else { try removeValue(forKey: key) }
        }
        return skipped
    }

    /// Whether a lock keeps `key` from being written here.
    func isLocked(_ key: String) -> Bool {
        policy.lock(forKey: KeyIdentity.normalize(key)) != nil
    }

    /// Removes `keyOrPrefix`, or every stored key under it when it ends in `.`, so reads return
    /// the defaults again.
    ///
    /// - Returns: How many of the keys held a value.
    @discardableResult
    public func reset(_ keyOrPrefix: String) throws(SettingsError) -> Int {
        try resetReporting(keyOrPrefix).removed
    }

    /// `reset(_:)`, also naming the locked keys a prefix (or `""`, every key) left alone.
    package func resetReporting(_ keyOrPrefix: String) throws(SettingsError) -> (
        removed: Int, skipped: [String]
    ) {
        let isPrefix = keyOrPrefix.isEmpty || keyOrPrefix.hasSuffix(".")
        let keys = isPrefix ? settings.keys(withPrefix: keyOrPrefix) : [keyOrPrefix]
        var removed = 0
        var skipped: [String] = []
        // A prefix skips its locked keys, as `Settings.reset()` does; one locked key is refused.
        for key in keys {
            if isPrefix && isLocked(key) {
                skipped.append(key)
                continue
            }
            if settings.storedValue(forKey: key) != nil { removed += 1 }
            try removeValue(forKey: key)
        }
        return (removed, skipped)
    }

    /// Logs a write under the key's one identity (`KeyIdentity`), after checking the key and the
    /// policy (locks, schemas).
    private func record(_ key: String, _ value: SettingValue?) throws(SettingsError) {
        let key = KeyIdentity.normalize(key)
        try KeyValidation.validate(key, maximumBytes: settings.configuration.limits.maximumKeyBytes)
        try policy.checkWrite(value, forKey: key)
        log.append(PendingWrite(key: key, value: value, actor: actor))
    }
}

/// A write waiting in a transaction: the key, the new value (nil: a removal), and who asked.
struct PendingWrite {
    let key: String
    let value: SettingValue?
    let actor: ChangeActor?
}

extension SettingsTransaction {
    /// Checks every write's precondition (a key's last one counts), then makes the writes in
    /// order: a nil value removes the key.
    ///
    /// - Throws: `versionMismatch` naming every key whose precondition failed, before anything
    ///   is written; what a write may throw.
    public func write(_ writes: [SettingWrite]) throws(SettingsError) {
        var preconditions: [String: SettingPrecondition] = [:]
        for write in writes {
            if let precondition = write.precondition { preconditions[write.key] = precondition }
        }
        if !preconditions.isEmpty { try require(preconditions) }
        for write in writes {
            if let value = write.value {
                try set(value, forKey: write.key)
            } else {
                try removeValue(forKey: write.key)
            }
        }
    }

    /// Refuses the transaction unless `key` holds what `precondition` says (compare-and-set).
    ///
    /// - Throws: `versionMismatch` naming the version the key holds; throw it on (or let it
    ///   leave the closure) and nothing of the transaction is written.
    public func require(_ precondition: SettingPrecondition, forKey key: String) throws(SettingsError) {
        try require([key: precondition])
    }

    /// Refuses the transaction unless every key holds what its precondition says; the error
    /// names every key that does not.
    ///
    /// A key this transaction already wrote holds no version yet: only `.absent` can be met
    /// there, after a removal. (A daemon commits many clients' writes in one transaction and,
    /// when one fails, each alone; so two compare-and-sets of one key never both succeed.)
    public func require(_ preconditions: [String: SettingPrecondition]) throws(SettingsError) {
        var failed: [(key: String, required: SettingPrecondition, current: SettingVersion?)] = []
        for (key, precondition) in preconditions {
            let stored = settings.versionedValue(forKey: key)?.version
            if let position = latestPosition(of: KeyIdentity.normalize(key)) {
                let isRemoved = log[position].value == nil
                if !(isRemoved && precondition == .absent) { failed.append((key, precondition, stored)) }
            } else if !precondition.isMet(by: stored) {
                failed.append((key, precondition, stored))
            }
        }
        guard failed.isEmpty else { throw .versionMismatch(failed) }
    }
}
