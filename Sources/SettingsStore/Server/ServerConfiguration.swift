/// How a `SettingsServer` listens and protects itself.
public struct ServerConfiguration: Sendable {
    /// The Unix socket path to listen on.
    public var socketPath: String
    /// The largest frame accepted from a client (8 MiB by default); at least
    /// `minimumFrameBytes(for:)` of the store's limits, so that every value they allow can be set.
    public var maximumFrameBytes: Int
    /// How many bytes may wait to be written to one client before it is dropped as too slow.
    public var outboundLimitBytes: Int
    /// User ids allowed to connect besides the daemon's own and root.
    public var allowedUIDs: Set<UInt32>
    /// The most watches one connection may hold.
    public var maximumWatchesPerConnection: Int
    /// Where the server logs.
    public var logger: SettingsLogger
    /// Seconds after which a client that holds no watch, is no replica and has nothing in flight
    /// is closed (with a `timeout` error frame); 0 keeps idle clients forever. Defaults to 300.
    public var idleTimeout: Double = 300
    /// The most bytes of import parts the server stages for all connections together, and for
    /// one import (as `ServerConnection.stagedCost` counts them: an entry's key and value and
    /// what holding it costs). 256 MiB unless a test sets less.
    package var stagedImportLimit = 256 << 20

    /// Creates a configuration; every limit has a sensible default.
    public init(
        socketPath: String, maximumFrameBytes: Int = 8 << 20, outboundLimitBytes: Int = 16 << 20,
        allowedUIDs: Set<UInt32> = [], maximumWatchesPerConnection: Int = 1024,
        logger: SettingsLogger = SettingsLogger()
    ) {
        self.socketPath = socketPath
        self.maximumFrameBytes = maximumFrameBytes
        self.outboundLimitBytes = outboundLimitBytes
        self.allowedUIDs = allowedUIDs
        self.maximumWatchesPerConnection = maximumWatchesPerConnection
        self.logger = logger
    }

    /// The smallest frame that carries a `set` of any value `limits` allow: the JSON form of a
    /// value takes at most 6 bytes per stored byte (a control character is written `\u0001`),
    /// and so does its key, plus the request's envelope.
    package static func minimumFrameBytes(for limits: SettingsLimits) -> Int {
        6 * (limits.maximumValueBytes + limits.maximumKeyBytes) + 1024
    }
}
