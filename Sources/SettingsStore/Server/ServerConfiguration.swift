/// How a `SettingsServer` listens and protects itself.
public struct ServerConfiguration: Sendable {
    /// The Unix socket path to listen on.
    public var socketPath: String
    /// The largest frame accepted from a client (1 MiB by default).
    public var maximumFrameBytes: Int
    /// How many bytes may wait to be written to one client before it is dropped as too slow.
    public var outboundLimitBytes: Int
    /// User ids allowed to connect besides the daemon's own and root.
    public var allowedUIDs: Set<UInt32>
    /// The most watches one connection may hold.
    public var maximumWatchesPerConnection: Int
    /// Where the server logs.
    public var logger: Logger

    /// Creates a configuration; every limit has a sensible default.
    public init(
        socketPath: String, maximumFrameBytes: Int = 1 << 20, outboundLimitBytes: Int = 16 << 20,
        allowedUIDs: Set<UInt32> = [], maximumWatchesPerConnection: Int = 1024, logger: Logger = Logger()
    ) {
        self.socketPath = socketPath
        self.maximumFrameBytes = maximumFrameBytes
        self.outboundLimitBytes = outboundLimitBytes
        self.allowedUIDs = allowedUIDs
        self.maximumWatchesPerConnection = maximumWatchesPerConnection
        self.logger = logger
    }
}
