/// The one gate for what arrives from outside the process: frames from socket replicas, rows and
/// counters from the PostgreSQL hub. Numbers, versions, keys and values are checked here before
/// anything is stored, relayed, or computed with; a refusal says what and why, for the log.
///
/// Every decoder of outside input calls it (`ReplicationMessage`, `HubNamespace`), and every
/// entry passes it again where all sources meet (`ReplicaCache.merge`), so no path can skip it.
package enum Arrival {
    /// The largest position (sequence number, cursor, hub counter) accepted from outside: far
    /// beyond any real log, and small enough that no sum or difference of two can overflow.
    static let maximumPosition: Int64 = 1 << 62

    /// Whether `value` is a position this gate accepts.
    package static func isPosition(_ value: Int64) -> Bool {
        value >= 0 && value <= maximumPosition
    }

    /// `value` as a position named `what`: refused unless `0 ... maximumPosition`.
    @discardableResult
    package static func position(_ value: Int64, _ what: String) throws(SettingsError) -> Int64 {
        guard isPosition(value) else {
            throw SettingsError(.protocolError, "\(what) \(value) is out of range (0 to 2^62)")
        }
        return value
    }

    /// A version from outside: its stamp below the year 4199 (`HybridTimestamp.maximumMilliseconds`).
    static func check(_ version: SettingVersion) throws(SettingsError) {
        guard version.timestamp.milliseconds < HybridTimestamp.maximumMilliseconds else {
            throw SettingsError(
                .protocolError, "version \(version) is stamped beyond the year 4199: a forged or broken clock"
            )
        }
    }

    /// The longest key accepted from outside for a store whose limit is `maximumKeyBytes`: a key
    /// somewhat over the limit is a quota matter (refused by the limits and announced as
    /// `quotaViolation`); one far over it is hostile and never held in memory beyond this check.
    package static func keyCap(forLimit maximumKeyBytes: Int) -> Int {
        max(1024, 4 * maximumKeyBytes)
    }

    /// An entry from outside, tombstones included: a valid key (a tombstone's within
    /// `maximumKeyBytes`, since nothing longer can be held here; a value's within `keyCap`), a
    /// bounded version, and a value every path can carry back (finite dates).
    static func check(_ entry: SettingEntry, maximumKeyBytes: Int) throws(SettingsError) {
        let cap = entry.value == nil ? maximumKeyBytes : keyCap(forLimit: maximumKeyBytes)
        try KeyValidation.validate(entry.key, maximumBytes: cap)
        try check(entry.version)
        if let value = entry.value, let problem = problem(in: value) {
            throw SettingsError(
                .invalidValue, "\(problem) for '\(entry.key.debugDescriptionTruncated)'", key: entry.key)
        }
    }

    /// What makes `value` one that no path could carry back, if anything (sizes and nesting are
    /// the limits' business: refused there, and announced as `quotaViolation`).
    private static func problem(in value: SettingValue) -> String? {
        nonFiniteDate(in: value) ? "a date that is not a finite time" : nil
    }

    private static func nonFiniteDate(in value: SettingValue) -> Bool {
        switch value {
        case .date(let date): !date.timeIntervalSinceReferenceDate.isFinite
        case .array(let values): values.contains(where: nonFiniteDate)
        case .dictionary(let values): values.values.contains(where: nonFiniteDate)
        default: false
        }
    }
}
