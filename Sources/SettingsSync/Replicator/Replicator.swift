public import SettingsStore
import SettingsWire
import Synchronization

/// Replication for one store: its sync sessions with other replicas, the links it dials (other
/// daemons over their sockets, a PostgreSQL hub) and what is known of every peer.
///
/// The store only commits and announces; the replicator hears of every commit after the store's
/// locks are released (announced or not: a peer's change to a locked key still travels) and wakes
/// the sessions and links that must send it. Whoever owns the links owns the replicator: the
/// daemon (`SettingsDaemon`), or an app that syncs its embedded store. Keep one per store:
/// two replicators of one store would each think they are its only sender.
///
/// ```swift
/// let settings = try Settings(path: path)
/// let replicator = Replicator(settings: settings)
/// let link = replicator.sync(with: SettingsPaths.socket)   // converges whenever the daemon runs
/// replicator.peers                                         // progress and agreement per peer
/// ```
public final class Replicator: Sendable {
    /// The store this replicator syncs.
    public let settings: Settings
    /// Where the sessions and links log.
    package let logger: SettingsLogger?
    let registry = PeerRegistry()
    /// The hub links started here and not yet stopped, for `hubs` and their wake-ups.
    private let hubConnectors = Mutex<[ObjectIdentifier: HubConnector]>([:])
    /// The folder links started here and not yet released, for `folders` and their wake-ups.
    private let folderConnectors = Mutex<[ObjectIdentifier: FolderConnector]>([:])
    private let commits = Mutex<SubscriptionToken?>(nil)

    /// A replicator for `settings`, with no sessions or links yet.
    public init(settings: Settings, logger: SettingsLogger? = nil) {
        self.settings = settings
        self.logger = logger
        let token = settings.observeCommits { [weak self] notice in self?.storeCommitted(notice) }
        commits.withLock { $0 = token }
    }

    /// The replicas this one syncs or has synced with during this run, with their progress.
    public var peers: [PeerStatus] {
        registry.all
    }

    /// The links dialled by `sync(with:)`, with their health.
    public var links: [LinkStatus] {
        registry.links
    }

    /// The hub links started by `sync(withHub:)` and not stopped, with their state.
    public var hubs: [HubStatus] {
        let live = hubConnectors.withLock { connectors in
            connectors = connectors.filter { !$0.value.isStopped }
            return Array(connectors.values)
        }
        return live.map(\.status).sorted { $0.address < $1.address }
    }

    /// Starts syncing the store with the replica (usually a daemon) at `socketPath`, in both
    /// directions, reconnecting with backoff while it is unreachable. The store keeps working on
    /// its own file meanwhile; changes converge when the connection is up.
    ///
    /// - Parameters:
    ///   - socketPath: The replica's socket.
    ///   - handshakeTimeout: How long the peer has to answer the hello before the attempt fails
    ///     and is retried with backoff (clamped to 10 milliseconds … 1 hour).
    /// - Returns: The link; it runs until `stop()` or until it is released.
    public func sync(
        with socketPath: String, handshakeTimeout: Duration = ReplicaLink.defaultHandshakeTimeout
    )
        -> ReplicaLink
    {
        sync(over: UnixSocketChannel(path: socketPath), handshakeTimeout: handshakeTimeout)
    }

    /// Starts syncing the store with the replica `channel` reaches, as `sync(with:)` does over a
    /// socket.
    public func sync(
        over channel: any ReplicaChannel, handshakeTimeout: Duration = ReplicaLink.defaultHandshakeTimeout
    )
        -> ReplicaLink
    {
        let dialer = ReplicaDialer(
            settings: settings, registry: registry, channel: channel, logger: logger,
            handshakeTimeout: handshakeTimeout)
        dialer.start()
        return ReplicaLink(dialer, owner: self)
    }

    /// Starts syncing the store with a namespace of a PostgreSQL hub (see `HubLink`), in both
    /// directions, on its own thread; the store keeps working while the hub is unreachable.
    ///
    /// - Throws: `invalidValue` when the URL cannot be parsed (nothing else is checked until the
    ///   link connects: a wrong password or a missing schema show in `status` and the log).
    /// - Returns: The link; it runs until `stop()` or until it is released.
    public func sync(withHub configuration: HubConfiguration) throws(SettingsError) -> HubLink {
        let connector = try HubConnector(settings: settings, configuration: configuration, logger: logger)
        hubConnectors.withLock { connectors in
            connectors = connectors.filter { !$0.value.isStopped }
            connectors[ObjectIdentifier(connector)] = connector
        }
        do throws(SettingsError) {
            // An account change ends every session: its peers meet the new account in their
            // next hello, and follow it.
            if case .changed = try connector.start() { registry.closeAllSessions() }
        } catch {
            hubConnectors.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(connector)) }
            throw error
        }
        return HubLink(connector, owner: self)
    }

    /// The folder links started by `sync(withFolder:)` and not stopped, with their state.
    public var folders: [FolderStatus] {
        let live = folderConnectors.withLock { connectors in
            connectors = connectors.filter { !$0.value.isStopped }
            return Array(connectors.values)
        }
        return live.map(\.status).sorted { $0.path < $1.path }
    }

    /// Starts syncing the store through `folder`, a folder something else keeps in sync between
    /// machines (Syncthing, Nextcloud, Dropbox, rclone, a USB stick), in both directions (see
    /// `FolderLink`). The folder is made if missing; while it is unreadable the link retries
    /// with backoff and says why in its status.
    ///
    /// With `keyring`, what goes into the folder is sealed (end-to-end encrypted, see
    /// docs/SYNC.md) unless `isPlain` marks it plain; a folder sealed under a key the keyring
    /// does not hold is refused (`sealMismatch` in its status).
    ///
    /// - Returns: The link; it runs until `stop()` or until it is released.
    public func sync(withFolder folder: String, keyring: SyncKeyring? = nil, isPlain: Bool = false)
        -> FolderLink
    {
        let connector = FolderConnector(
            settings: settings, root: folder, keyring: keyring, marksPlain: isPlain, logger: logger)
        folderConnectors.withLock { connectors in
            connectors = connectors.filter { !$0.value.isStopped }
            connectors[ObjectIdentifier(connector)] = connector
        }
        connector.start()
        return FolderLink(connector, owner: self)
    }

    /// Sessions accepted by a server serving this store join here (`SettingsServer`).
    package func makeSession(
        address: String, send: @escaping (ReplicationMessage) -> Void,
        execute: @escaping (@escaping @Sendable () -> Void) -> Void,
        end: @escaping @Sendable (SettingsError) -> Void
    ) -> SyncSession {
        SyncSession(
            settings: settings, registry: registry, address: address, logger: logger, send: send,
            execute: execute, end: end)
    }

    /// Makes every hub link compare digests again at its next quiet moment; until it has, its
    /// status says `checking`.
    package func verifyHubs() {
        for connector in hubConnectors.withLock({ Array($0.values) }) { connector.verify() }
    }

    /// Relays a commit notice (outside the store's locks): sessions send what is new, or close
    /// when the replica took a new id; hub links push.
    private func storeCommitted(_ notice: CommitNotice) {
        if notice.kind == .identity {
            registry.closeAllSessions()
        } else {
            registry.nudgeSessions(notice.kind)
        }
        // Stopped connectors are forgotten when a link starts or `hubs` is read; a nudge to one
        // does nothing.
        for connector in hubConnectors.withLock({ Array($0.values) }) { connector.nudge() }
        for connector in folderConnectors.withLock({ Array($0.values) }) { connector.nudge() }
    }
}
