/// How a store is opened: durability, limits and the hooks tests and hosts may replace.
public struct SettingsConfiguration: Sendable {
    /// How much each commit survives. Defaults to `.normal`.
    public var durability: Durability
    /// The limits every write is checked against. Defaults to `.desktop`.
    public var limits: SettingsLimits
    /// The wall clock, in milliseconds since 1970, that stamps writes; replace it to test clock skew.
    public var clock: @Sendable () -> UInt64
    /// The monotonic clock the store measures durations with (how recent a local write is);
    /// tests hold it still.
    package var monotonicClock: @Sendable () -> Deadline = { .now }
    /// Called when an API that cannot throw fails: a typed subscript read that found a value of
    /// another type (and returned the default), or an `@Setting` property set that the store
    /// refused. Defaults to `reportOncePerKey` (a warning on standard error, once per key);
    /// hosts route it to their own log, or `nil` silences it.
    public var onError: (@Sendable (SettingsError) -> Void)?
    /// How far ahead of the wall clock a stamp received from a replica may move this replica's
    /// clock (one hour by default); stamps further ahead are still applied unchanged (see
    /// `docs/SYNC.md`). Clamped to 1 second … 10 years.
    public var maximumClockSkew: Duration {
        get { .milliseconds(maximumClockSkewMilliseconds) }
        set { maximumClockSkewMilliseconds = newValue.milliseconds(clampedTo: 1_000...Self.tenYears) }
    }
    /// `maximumClockSkew` in milliseconds, for the arithmetic on stamps.
    package private(set) var maximumClockSkewMilliseconds: UInt64 = 3_600_000
    /// How long a deleted key's tombstone is kept (90 days by default): long enough for every
    /// replica to have heard of the delete. Older tombstones are collected when the store opens
    /// and by `collectTombstones()`; a replica offline for longer gets the state as it is, without
    /// the keys deleted meanwhile (see `docs/SYNC.md`). Clamped to 1 hour … 10 years.
    public var tombstoneLifetime: Duration {
        get { .milliseconds(tombstoneLifetimeMilliseconds) }
        set { tombstoneLifetimeMilliseconds = newValue.milliseconds(clampedTo: 3_600_000...Self.tenYears) }
    }
    /// `tombstoneLifetime` in milliseconds.
    package private(set) var tombstoneLifetimeMilliseconds: UInt64 = 90 * 24 * 3_600_000
    /// Ten years in milliseconds: the longest any duration of the configuration may be.
    static let tenYears: UInt64 = 10 * 366 * 24 * 3_600_000
    /// What the history keeps (90 days and 1,000,000 records by default; `.off` keeps none).
    public var history = HistoryRetention()
    /// Schemas, system defaults and locks (see `SettingsPolicy`); none by default. Replace them
    /// while the store is open with `Settings.apply(_:)`.
    public var policy = SettingsPolicy()
    /// Whether the store only reads its file: nothing is created, locked or written, and every
    /// write throws `readOnly`. A reader that cannot write the file or its folder still reads it.
    /// Defaults to `false`.
    public var isReadOnly = false

    /// Creates a configuration; every parameter has the default described on its property.
    public init(
        durability: Durability = .normal,
        limits: SettingsLimits = .desktop,
        clock: @escaping @Sendable () -> UInt64 = SettingsConfiguration.systemClock,
        onError: (@Sendable (SettingsError) -> Void)? = SettingsConfiguration.reportOncePerKey
    ) {
        self.durability = durability
        self.limits = limits
        self.clock = clock
        self.onError = onError
    }

    /// Logs each error to standard error as a warning, once per key and code: what `onError`
    /// does by default, so a typed read that keeps returning its default is not silent.
    public static let reportOncePerKey: @Sendable (SettingsError) -> Void = { ErrorReport.shared.report($0) }

    /// The system's real-time clock in milliseconds since 1970.
    @Sendable public static func systemClock() -> UInt64 {
        WallClock.milliseconds()
    }
}
