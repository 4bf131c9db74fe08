/// One committed change of one or more keys, announced to observers after the commit.
///
/// An observer receives only the keys it asked for: a change of five keys delivered to an
/// observer of one of them lists that one key.
public struct SettingsChange: Sendable, Equatable {
    /// One key's new state, or, for a refusal, the state it kept.
    public struct KeyChange: Sendable, Equatable {
        /// The key.
        public let key: String
        /// The new stored value, or `nil` when the key was removed (reads return its default again).
        /// For a refusal: the value the key kept (`nil`: it holds none).
        public let value: SettingValue?
        /// The version of the new state; for a refusal, of the state kept (the refused version
        /// when the key holds nothing here).
        public let version: SettingVersion
        /// For a change refused by this store (reasons `quotaViolation` and `schemaViolation`):
        /// the version that was refused. `nil` for every change that took effect.
        public let refusedVersion: SettingVersion?

        /// Creates a key change.
        package init(key: String, value: SettingValue?, version: SettingVersion) {
            self.key = key
            self.value = value
            self.version = version
            refusedVersion = nil
        }

        /// A refusal of `refused`, the key keeping `kept` (nil: it holds nothing here).
        package init(
            key: String, refused: SettingVersion, kept: (value: SettingValue?, version: SettingVersion)?
        ) {
            self.key = key
            value = kept?.value
            version = kept?.version ?? refused
            refusedVersion = refused
        }

        /// Whether the key holds state of its own here (always, for a change that took effect).
        package var keepsState: Bool { refusedVersion == nil || version != refusedVersion }

        /// The state of `entry`, without its local sequence number.
        package init(_ entry: SettingEntry) {
            self.init(key: entry.key, value: entry.value, version: entry.version)
        }
    }

    /// Why the keys changed.
    public let reason: ChangeReason
    /// The replica that made the change (this one for local writes).
    public let origin: ReplicaID
    /// The changed keys with their new states, in the order they were written.
    public let changes: [KeyChange]
    /// The store's sequence number once this change was committed: the number of its last
    /// stored change, or, for a change that stores nothing (reasons `system`, `quotaViolation`,
    /// `schemaViolation`, `resync`), the number the store was at. A watch started `since` it
    /// receives the changes after this one (`Settings.changes(since:matching:)`).
    public let sequence: Int64

    /// Creates a change.
    package init(reason: ChangeReason, origin: ReplicaID, changes: [KeyChange], sequence: Int64) {
        self.reason = reason
        self.origin = origin
        self.changes = changes
        self.sequence = sequence
    }

    /// Whether the change stored what it lists, so the history numbers it (`sequence`) and a
    /// watch resumed from an earlier number replays it.
    public var isNumbered: Bool {
        switch reason {
        case .system, .quotaViolation, .schemaViolation, .resync: false
        default: true
        }
    }

    /// The changed keys, in the order they were written.
    public var keys: [String] { changes.map(\.key) }

    /// Whether a watch whose replay reached `sequence` still lacks this change: it is numbered
    /// after it, or it stores nothing (not numbered, never replayed).
    public func follows(_ sequence: Int64) -> Bool {
        !isNumbered || self.sequence > sequence
    }

    /// The same change restricted to the keys `filter` selects, or nil when none is selected.
    func restricted(to filter: ChangeFilter) -> SettingsChange? {
        if case .all = filter { return self }
        let selected = changes.filter { filter.matches($0.key) }
        if selected.isEmpty { return nil }
        if selected.count == changes.count { return self }
        return SettingsChange(reason: reason, origin: origin, changes: selected, sequence: sequence)
    }
}
