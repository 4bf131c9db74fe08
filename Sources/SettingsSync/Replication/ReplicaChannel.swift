public import SettingsStore
import SettingsWire

/// What carries a replica session to a replica: something that opens an ordered byte stream on
/// which the replica protocol runs (this side's hello first). The session, the handshake's
/// time-out, reconnecting with backoff and the link's status are the same whatever the channel
/// (`ReplicaDialer`), so a new way to reach a replica is one small type.
public protocol ReplicaChannel: Sendable {
    /// How `status` and the log name the replica (a socket path).
    var address: String { get }

    /// Opens a connected stream to the replica: a descriptor the caller owns and closes.
    ///
    /// - Throws: `daemonNotRunning` when nothing answers, `accessDenied` when what answers may
    ///   not be trusted, or another error naming the address and what went wrong.
    func open() throws(SettingsError) -> Int32
}

/// A replica's daemon on its Unix socket (`settingsd run --peer SOCKET`): the process listening
/// must run as this user or root (`DaemonTrust`).
public struct UnixSocketChannel: ReplicaChannel {
    /// The socket's path.
    public let path: String

    /// The channel to the daemon listening on `path`.
    public init(path: String) {
        self.path = path
    }

    /// The socket's path.
    public var address: String { path }

    /// Connects to the socket, and checks that the process listening is this user's or root's.
    public func open() throws(SettingsError) -> Int32 {
        try DaemonTrust.connect(path: path)
    }
}
