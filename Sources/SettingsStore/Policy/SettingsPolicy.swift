/// What an administrator and the app's schemas impose on a store: schema rules, system defaults
/// (`/etc/settingsd/defaults.d`) and locks (`/etc/settingsd/locks.d`), as in dconf's profiles and
/// GSettings' schemas (see `docs/SCHEMA.md`), and the hub's fleet policies (`docs/POLICY.md`).
///
/// A key's effective value is, first to last: the lock (the system default, else the schema
/// default), the hub's mandatory value, the stored value, the system default, the hub's
/// recommended value, a registered default, the schema default. The machine's own files win
/// over the hub: a lock in `locks.d` over a mandatory value, a default in `defaults.d` over a
/// recommended one.
public struct SettingsPolicy: Sendable, Equatable {
    /// A system default and the file that set it.
    package struct SystemDefault: Sendable, Equatable {
        /// The value.
        package let value: SettingValue
        /// The `defaults.d` file.
        package let file: String

        package init(value: SettingValue, file: String) {
            self.value = value
            self.file = file
        }
    }

    /// A lock on a key, or on every key under a prefix ending in `.`.
    package struct Lock: Sendable, Equatable {
        /// The key or the prefix.
        package let key: String
        /// The `locks.d` file.
        package let file: String
    }

    /// The schema rules.
    package var schema = SettingsSchema()
    /// System defaults by key.
    package var systemDefaults: [String: SystemDefault] = [:]
    /// Locks.
    package var locks: [Lock] = [] {
        didSet { lockIndex = LockIndex(locks) }
    }
    private var lockIndex = LockIndex([])
    /// The hub's policies, composed under `schema` (`Settings.applyFleetPolicy`).
    package var fleet = FleetPolicy()
    /// Whether keys no schema declares are refused (`settingsd run --strict-schemas`).
    package var isStrict = false
    /// What the daemon logs as warnings after loading: entries of the policy folders that are not
    /// regular files (a FIFO would block a reader forever), GSettings schema files that could not
    /// be read, GSettings keys a settingsd schema types otherwise.
    package var warnings: [String] = []

    /// Notes that the folder entries `files` were not read.
    mutating func skip(_ files: [String]) {
        warnings += files.map {
            "skipped '\($0)': not a regular file outside /proc, /sys and /dev (a FIFO or a device would block reading, a kernel file is no policy)"
        }
    }

    /// No rules, no defaults, no locks: every key is free-form.
    public init() {}

    /// Whether there is nothing to apply.
    public var isEmpty: Bool {
        schema.isEmpty && systemDefaults.isEmpty && locks.isEmpty && !isStrict && fleet.isEmpty
    }

    /// The lock covering `key`, if any.
    package func lock(forKey key: String) -> Lock? {
        locks.isEmpty ? nil : lockIndex.first(covering: key).map { locks[$0] }
    }

    /// What locks `key`, in words: the `locks.d` file, or the hub's mandatory policy; nil when
    /// nothing does.
    package func locker(ofKey key: String) -> String? {
        if let lock = lock(forKey: key) { return lock.file }
        return fleet.mandatory(forKey: key).map { "hub policy '\($0.policy)' (revision \($0.revision))" }
    }

    /// Throws `locked` or `schemaViolation` unless a local write of `value` (nil: a removal) to
    /// `key` is allowed.
    package func checkWrite(_ value: SettingValue?, forKey key: String) throws(SettingsError) {
        guard !isEmpty else { return }
        if let lock = lock(forKey: key) {
            throw SettingsError(
                .locked, "'\(key)' is locked by \(lock.file); its value cannot be changed here", key: key,
                path: lock.file)
        }
        if let setting = fleet.mandatory(forKey: key) {
            throw SettingsError(
                .locked,
                "'\(key)' is set by the hub's policy '\(setting.policy)' (revision \(setting.revision), mandatory); its value cannot be changed here",
                key: key)
        }
        try checkArrival(value, forKey: key)
    }

    /// Throws `schemaViolation` unless `value` fits the key's schema (a lock does not refuse
    /// what arrives from a replica: it is stored, and the lock keeps the effective value).
    func checkArrival(_ value: SettingValue?, forKey key: String) throws(SettingsError) {
        guard let rule = schema.rule(forKey: key) else {
            // Strictness is about what may be stored: a key kept from before stays deletable.
            guard !isStrict || value == nil else {
                throw SettingsError(
                    .schemaViolation, "'\(key)' is not declared by any schema, and schemas are strict",
                    key: key)
            }
            return
        }
        if let value { try rule.check(value, forKey: key) }
    }

    /// Whether `key` is kept on this replica only (schema scope `local`).
    package func isLocal(_ key: String) -> Bool {
        schema.scope(forKey: key) == .local
    }
}

/// Locks by key: an exact lock is one lookup, a prefix lock one lookup per dot in the key, so a
/// write costs the same under 20,000 locks as under one.
struct LockIndex: Sendable, Equatable {
    private var exact: [String: Int] = [:]
    private var prefixes: [String: Int] = [:]

    package init(_ locks: [SettingsPolicy.Lock]) {
        for (index, lock) in locks.enumerated() {
            if lock.key.hasSuffix(".") {
                if prefixes[lock.key] == nil { prefixes[lock.key] = index }
            } else if exact[lock.key] == nil {
                exact[lock.key] = index
            }
        }
    }

    /// The position of the first lock (in file order) that covers `key`.
    func first(covering key: String) -> Int? {
        var first = exact[key]
        guard !prefixes.isEmpty else { return first }
        let name = KeyIdentity.normalize(key)
        var position = name.startIndex
        while let dot = name[position...].firstIndex(of: ".") {
            position = name.index(after: dot)
            if let index = prefixes[String(name[..<position])], index < (first ?? .max) { first = index }
        }
        return first
    }
}
