import SettingsStore
import SettingsWire

/// Keeps a store in sync with the replica at a socket (a daemon, usually), reconnecting with
/// backoff whenever the connection breaks, until stopped or released.
///
/// ```swift
/// let replicator = Replicator(settings: settings)
/// let link = replicator.sync(with: SettingsPaths.socket)   // works offline, converges when reachable
/// // ...
/// link.stop()   // or let it go: a released link stops too
/// ```
///
/// Its health (dialling, waiting for the hello answer, syncing, the last error) shows in
/// `Replicator.links` and `settingsd status`; a failure is logged at warning once, not once per
/// retry.
public final class ReplicaLink: Sendable {
    /// How long the peer has to answer the hello by default before the attempt counts as failed.
    public static let defaultHandshakeTimeout = Duration.seconds(10)

    let dialer: ReplicaDialer
    /// The replicator that relays the store's commits to this link: kept alive as long as the link.
    private let owner: any Sendable

    init(_ dialer: ReplicaDialer, owner: any Sendable) {
        self.dialer = dialer
        self.owner = owner
    }

    deinit {
        dialer.stop()
    }

    /// The socket this link dials.
    public var socketPath: String { dialer.address }

    /// How long the peer has to answer the hello.
    public var handshakeTimeout: Duration { dialer.handshakeTimeout }

    /// Whether a sync session is up now.
    public var isConnected: Bool { dialer.isConnected }

    /// Closes the connection and stops reconnecting.
    public func stop() {
        dialer.stop()
    }
}
