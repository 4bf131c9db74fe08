package import SettingsStore
import SettingsWire

/// Where and how a replica syncs through a PostgreSQL hub.
public struct HubConfiguration: Sendable, Equatable {
    /// A libpq connection string or `postgresql://` URI: TLS (`sslmode=verify-full`),
    /// `PGPASSFILE`/`~/.pgpass`, service files and every libpq option work unchanged.
    public var url: String
    /// The namespace (a PostgreSQL role the connecting role is a member of); nil: the
    /// connecting role itself.
    public var namespace: String?

    /// The longest a hub statement may go unanswered before the link calls the hub stalled and
    /// reconnects (a frozen server process, a network gone silent): 30 seconds by default,
    /// clamped to 100 milliseconds … 1 day.
    public var stallTimeout: Duration {
        get { .milliseconds(stallTimeoutMilliseconds) }
        set { stallTimeoutMilliseconds = newValue.milliseconds(clampedTo: 100...86_400_000) }
    }
    /// `stallTimeout` in milliseconds.
    package private(set) var stallTimeoutMilliseconds: UInt64 = 30_000

    /// Whether the link listens or polls (`?settingsd_pool=` in `url` says it too, and wins).
    package var pooling: HubPooling

    /// The least time between polls when the link polls (after a push of its own), and the
    /// floor of the longest, which the hub's poll plan raises for a namespace of many machines
    /// (`PollSchedule`): the least after activity, doubling while all is quiet up to the longest
    /// (`?settingsd_poll_min=` and `?settingsd_poll_max=` in `url` say it too, and win).
    package var pollInterval: ClosedRange<Duration>

    /// The poll interval unless the configuration says otherwise.
    package static let defaultPollInterval = Duration.milliseconds(250)...Duration.seconds(5)

    /// The longest between routine comparisons of digests for a link that polls
    /// (`PollSchedule.comparisonInterval`; tests shorten it).
    package var comparisonInterval = PollSchedule.comparisonInterval

    /// The sync keys the link seals with (nil: none, so the namespace stays plain, and a sealed
    /// one is refused). `?settingsd_seal=off` in `url` marks the namespace plain even then (a
    /// fleet namespace whose organisation owns the hub).
    package var keyring: SyncKeyring?

    /// Creates a configuration; `url` may carry settingsd's own options (`settingsd_pool`,
    /// `settingsd_poll_min`, `settingsd_poll_max`, see the README).
    public init(url: String, namespace: String? = nil, stallTimeout: Duration = .seconds(30)) {
        self.init(url: url, namespace: namespace, stallTimeout: stallTimeout, pooling: .auto)
    }

    /// Throws what the link would throw on starting for a URL or option it cannot use, checking
    /// nothing else (no connection is made): a daemon asks before it creates any file.
    package func validate() throws(SettingsError) {
        let url = HubURL(self.url)
        _ = try url.checkedConninfo()
        _ = try url.pooling(default: pooling)
        _ = try url.pollInterval(default: pollInterval)
        _ = try url.marksPlain()
    }

    /// Creates a configuration that also says how to reach the hub and how often to poll it.
    package init(
        url: String, namespace: String? = nil, stallTimeout: Duration = .seconds(30),
        pooling: HubPooling = .auto,
        pollInterval: ClosedRange<Duration> = defaultPollInterval
    ) {
        self.url = url
        self.namespace = namespace
        self.pooling = pooling
        self.pollInterval = pollInterval
        self.stallTimeout = stallTimeout
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
    package var lastContactMilliseconds: UInt64 = 0
    /// Why the last attempt or statement failed, if one did.
    public var lastError: String?
    /// The last local sequence number pushed to the hub.
    package var pushedThrough: Int64 = 0
    /// Local changes not pushed yet.
    public var pendingUp: Int64 = 0
    /// The hub's changes not applied here yet, as of the last look.
    public var pendingDown: Int64 = 0
    /// What the last comparison of digests found: `agreed`, `diverged (n keys)`, `checking`
    /// (the store or the hub changed since), or `unknown` (not compared yet).
    public var agreement = "unknown"
    /// Keys repaired by anti-entropy with the hub since the link started, both ways.
    package var repairedKeys = 0
    /// How the link learns of others' changes: `listen` (notifications), or `poll` (through a
    /// pooler in transaction pooling; the interval now is `pollSeconds`).
    package var mode = "listen"
    /// The time between polls now, in seconds (0 while the link listens).
    package var pollSeconds = 0.0
    /// The longest time between polls, in seconds, for the last poll plan (0 while the link
    /// listens).
    package var longestPollSeconds = 0.0
    /// The replicas the namespace saw in the last week, as the last poll plan said (nil: none
    /// read yet).
    package var pollReplicas: Int64?
    /// The polls a second the hub allows a namespace's machines together, as the last poll plan
    /// said (nil: none read yet).
    package var pollRate: Int64?
    /// Polls of the namespace's counter since the link started, each one fast-path call or one
    /// statement.
    package var polls = 0
    /// Of `polls`, those answered by a fast-path call (`HubPollCall`).
    package var pollCalls = 0
    /// Routine comparisons of digests the link did not run because the hub holds what it held
    /// when the last one agreed (`HubPollPlan.Mark`).
    package var comparisonsSpared = 0
    /// Comparisons of digests the link ran since it started.
    package var comparisons = 0
    /// Statements the link sent to the hub since it started, on every connection.
    package var statements = 0
    /// Why the hub was last found to have gone back (a restore, a failover, a reset counter).
    package var lastRewind: String?
    /// The last account change since the link started: the namespace it moved from and to, and
    /// how many keys changed (`ChangeReason.accountChange`).
    package var lastAccountChange: String?
    /// How far the hub server's clock is ahead of this replica's (negative: behind), in
    /// milliseconds, as measured when the link last connected.
    package var clockOffsetMilliseconds: Int64 = 0
    /// Entries pulled from the hub stamped further ahead of this replica's clock than
    /// `SettingsConfiguration.maximumClockSkew` (a machine with a clock far ahead, a forged row):
    /// applied, but they do not move this clock, so later writes here still win.
    package var entriesAheadOfClock = 0
    /// The id of the key the namespace is sealed under (end-to-end encrypted), nil while plain.
    public var sealedUnder: String?
    /// Sealed rows refused since the link started (altered, moved to another key, replayed at
    /// another version, sealed for another namespace, or under a key this machine does not hold).
    public var sealedRowsRefused = 0
    /// The last of them, in words.
    public var lastSealRefusal: String?
}
