import SettingsDaemonClient
import SettingsGNOME
public import SettingsStore
import SettingsSync
import SettingsWire

/// How a `SettingsServer` listens and protects itself.
public struct ServerConfiguration: Sendable {
    /// The Unix socket path to listen on.
    public var socketPath: String
    /// The largest frame accepted from a client (8 MiB by default); at least
    /// `minimumFrameBytes(for:)` of the store's limits, so that every value they allow can be set.
    /// Clamped to 1 KiB … 1 GiB.
    public var maximumFrameBytes: Int {
        didSet { maximumFrameBytes = min(max(maximumFrameBytes, 1 << 10), 1 << 30) }
    }
    /// How many bytes may wait to be written to one client before it is dropped as too slow
    /// (clamped to 64 KiB … 1 GiB).
    public var outboundLimitBytes: Int {
        didSet { outboundLimitBytes = min(max(outboundLimitBytes, 64 << 10), 1 << 30) }
    }
    /// User ids allowed to connect besides the daemon's own and root.
    public var allowedUIDs: Set<UInt32>
    /// The most watches one connection may hold (at least 1).
    public var maximumWatchesPerConnection: Int {
        didSet { maximumWatchesPerConnection = max(1, maximumWatchesPerConnection) }
    }
    /// Where the server logs.
    public var logger: SettingsLogger
    /// How long a client that holds no watch, is no replica and has nothing in flight may stay
    /// idle before it is closed (with a `timeout` error frame); nil keeps idle clients forever.
    /// Defaults to 300 seconds; clamped to 10 milliseconds … 10 years.
    public var idleTimeout: Duration? {
        get { idleTimeoutMilliseconds.map { .milliseconds($0) } }
        set { idleTimeoutMilliseconds = newValue?.milliseconds(clampedTo: 10...315_360_000_000) }
    }
    /// `idleTimeout` in milliseconds.
    package private(set) var idleTimeoutMilliseconds: UInt64? = 300_000
    /// The most bytes of import parts the server stages for all connections together, and for
    /// one import (as `ServerConnection.stagedCost` counts them: an entry's key and value and
    /// what holding it costs). 256 MiB unless a test sets less.
    package var stagedImportLimit = 256 << 20
    /// The sync key's id and where it is kept, for `status` (nil: no key).
    package var syncKey: String?

    /// Creates a configuration; every limit has a sensible default, and numbers out of range are
    /// clamped as each property says.
    public init(
        socketPath: String, maximumFrameBytes: Int = 8 << 20, outboundLimitBytes: Int = 16 << 20,
        allowedUIDs: Set<UInt32> = [], maximumWatchesPerConnection: Int = 1024,
        logger: SettingsLogger = SettingsLogger()
    ) {
        self.socketPath = socketPath
        self.maximumFrameBytes = min(max(maximumFrameBytes, 1 << 10), 1 << 30)
        self.outboundLimitBytes = min(max(outboundLimitBytes, 64 << 10), 1 << 30)
        self.allowedUIDs = allowedUIDs
        self.maximumWatchesPerConnection = max(1, maximumWatchesPerConnection)
        self.logger = logger
    }

    /// The smallest frame that carries a `set` of any value `limits` allow: the JSON form of a
    /// value takes at most 6 bytes per stored byte (a control character is written `\u0001`),
    /// and so does its key, plus the request's envelope.
    package static func minimumFrameBytes(for limits: SettingsLimits) -> Int {
        6 * (limits.maximumValueBytes + limits.maximumKeyBytes) + 1024
    }
}
