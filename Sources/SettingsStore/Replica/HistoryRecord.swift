/// One change as the history keeps it: what a key became and was, when, why, and who did it.
public struct HistoryRecord: Sendable, Equatable {
    /// The key.
    public let key: String
    /// The new value; nil for a deletion.
    public let value: SettingValue?
    /// The value before; nil when the key held none.
    public let previous: SettingValue?
    /// For keys a schema marks `secret`: the values are recorded as fingerprints only.
    public let isRedacted: Bool
    /// The change's version.
    public let version: SettingVersion
    /// The local sequence number the change took.
    public let sequence: Int64
    /// Why it changed: a `ChangeReason` raw value, or `revert`.
    public let reason: String
    /// The replica the change came from (this one for local writes).
    public let origin: ReplicaID
    /// When this replica committed it, in milliseconds since 1970.
    public let timeMilliseconds: UInt64
    /// Who made a local change (a daemon's client, or this process); nil for replicated ones.
    public let actor: ChangeActor?
    /// The name the replica that made the change (its version's) goes by
    /// (`Settings.name(ofReplica:)`), when it is known here.
    public package(set) var originName: String? = nil

    /// Creates a record.
    package init(
        key: String, value: SettingValue?, previous: SettingValue?, isRedacted: Bool = false,
        version: SettingVersion, sequence: Int64, reason: String, origin: ReplicaID, timeMilliseconds: UInt64,
        actor: ChangeActor?
    ) {
        self.key = key
        self.value = value
        self.previous = previous
        self.isRedacted = isRedacted
        self.version = version
        self.sequence = sequence
        self.reason = reason
        self.origin = origin
        self.timeMilliseconds = timeMilliseconds
        self.actor = actor
    }

    /// Whether the change deleted the key.
    public var isDeletion: Bool { value == nil }
}

/// What the history keeps, and for how long.
public struct HistoryRetention: Sendable, Equatable {
    /// How long records are kept (zero keeps no history at all; at most 100 years).
    public var keep: Duration {
        get { .milliseconds(keepMilliseconds) }
        set { keepMilliseconds = newValue.milliseconds(clampedTo: 0...3_153_600_000_000) }
    }
    /// `keep` in milliseconds.
    package private(set) var keepMilliseconds: UInt64 = 90 * 24 * 3_600_000
    /// The most records kept (a negative number keeps none).
    public var maximumRecords: Int {
        didSet { maximumRecords = max(0, maximumRecords) }
    }

    /// Creates a retention.
    public init(keep: Duration = .seconds(90 * 24 * 3_600), maximumRecords: Int = 1_000_000) {
        self.maximumRecords = max(0, maximumRecords)
        self.keep = keep
    }

    /// Whether history is kept.
    package var isEnabled: Bool { keepMilliseconds > 0 && maximumRecords > 0 }

    /// No history.
    public static let off = HistoryRetention(keep: .zero, maximumRecords: 0)
}

/// Which records a history query returns.
public struct HistoryQuery: Sendable, Equatable {
    /// One key, or every key under a prefix ending in `.`; nil: every key.
    public var keyOrPrefix: String?
    /// Only changes at or after this time (milliseconds since 1970).
    public var sinceMilliseconds: UInt64?
    /// Only changes at or before this time.
    public var untilMilliseconds: UInt64?
    /// The most records, newest first.
    public var limit: Int

    /// Creates a query.
    public init(
        keyOrPrefix: String? = nil, sinceMilliseconds: UInt64? = nil, untilMilliseconds: UInt64? = nil,
        limit: Int = 100
    ) {
        self.keyOrPrefix = keyOrPrefix
        self.sinceMilliseconds = sinceMilliseconds
        self.untilMilliseconds = untilMilliseconds
        self.limit = limit
    }
}
