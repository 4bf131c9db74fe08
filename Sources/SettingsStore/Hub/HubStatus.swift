/// Where and how a replica syncs through a PostgreSQL hub.
public struct HubConfiguration: Sendable, Equatable {
    /// A libpq connection string or `postgresql://` URI: TLS (`sslmode=verify-full`),
    /// `PGPASSFILE`/`~/.pgpass`, service files and every libpq option work unchanged.
    public var url: String
    /// The namespace (a PostgreSQL role the connecting role is a member of); nil: the
    /// connecting role itself.
    public var namespace: String?

    /// The longest a hub statement may go unanswered before the link calls the hub stalled and
    /// reconnects, in seconds (a frozen server process, a network gone silent).
    public var stallTimeout: Double

    /// Whether the link listens or polls (`?settingsd_pool=` in `url` says it too, and wins).
    public var pooling: HubPooling

    /// The least and the most time between polls when the link polls, in seconds: the least
    /// after activity, doubling while all is quiet up to the most (`?settingsd_poll_min=` and
    /// `?settingsd_poll_max=` in `url` say it too, and win). A change reaches a quiet machine
    /// within the most.
    public var pollInterval: ClosedRange<Double>

    /// The poll interval unless the configuration says otherwise.
    public static let defaultPollInterval = 0.25...5.0

    /// Creates a configuration.
    public init(
        url: String, namespace: String? = nil, stallTimeout: Double = 30, pooling: HubPooling = .auto,
        pollInterval: ClosedRange<Double> = defaultPollInterval
    ) {
        self.url = url
        self.namespace = namespace
        self.stallTimeout = stallTimeout
        self.pooling = pooling
        self.pollInterval = pollInterval
    }
}

/// What a replica knows of its hub link; the password never appears in it.
public struct HubStatus: Sendable, Equatable {
    /// The connection string without its password.
    public var address: String
    /// The namespace, once known (the connecting role's name when none was given).
    public var namespace: String?
    /// Whether a connection is up now.
    public var isConnected = false
    /// When the hub last answered, in milliseconds since 1970 (0: never).
    public var lastContactMilliseconds: UInt64 = 0
    /// Why the last attempt or statement failed, if one did.
    public var lastError: String?
    /// The last local sequence number pushed to the hub.
    public var pushedThrough: Int64 = 0
    /// Local changes not pushed yet.
    public var pendingUp: Int64 = 0
    /// The hub's changes not applied here yet, as of the last look.
    public var pendingDown: Int64 = 0
    /// What the last comparison of digests found: `agreed`, `diverged (n keys)`, `checking`
    /// (the store or the hub changed since), or `unknown` (not compared yet).
    public var agreement = "unknown"
    /// Keys repaired by anti-entropy with the hub since the link started, both ways.
    public var repairedKeys = 0
    /// How the link learns of others' changes: `listen` (notifications), or `poll` (through a
    /// pooler in transaction pooling; the interval now is `pollSeconds`).
    public var mode = "listen"
    /// The time between polls now, in seconds (0 while the link listens).
    public var pollSeconds = 0.0
    /// Polls of the namespace's counter since the link started (each one statement).
    public var polls = 0
    /// Statements the link sent to the hub since it started, on every connection.
    public var statements = 0
    /// Why the hub was last found to have gone back (a restore, a failover, a reset counter).
    public var lastRewind: String?
    /// The last account change since the link started: the namespace it moved from and to, and
    /// how many keys changed (`ChangeReason.accountChange`).
    public var lastAccountChange: String?
    /// How far the hub server's clock is ahead of this replica's (negative: behind), in
    /// milliseconds, as measured when the link last connected.
    public var clockOffsetMilliseconds: Int64 = 0
    /// Entries pulled from the hub stamped further ahead of this replica's clock than
    /// `SettingsConfiguration.maximumClockSkew` (a machine with a clock far ahead, a forged row):
    /// applied, but they do not move this clock, so later writes here still win.
    public var entriesAheadOfClock = 0
}
