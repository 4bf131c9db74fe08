import SettingsStore
import SettingsWire

/// Keeps a store in sync with a namespace of a PostgreSQL hub, on its own thread, reconnecting
/// with backoff while the hub is down, restarting or failing over: local reads and writes never
/// wait for it.
///
/// Changes go up as they commit (the replicator wakes the link) and come down as the hub notifies
/// (`LISTEN`/`NOTIFY`), with a catch-up every 30 seconds as a safety net. Both directions resume
/// exactly where they stopped: the hub records what each replica pushed, and the replica records
/// the last hub sequence number it applied, in the same transaction as the entries.
///
/// ```swift
/// let replicator = Replicator(settings: settings)
/// let hub = try replicator.sync(
///     withHub: HubConfiguration(url: "postgresql://me@db.example.org/settings?sslmode=verify-full"))
/// // ...
/// hub.stop()   // or let it go: a released link stops too
/// ```
public final class HubLink: Sendable {
    let connector: HubConnector
    /// The replicator that relays the store's commits to this link: kept alive as long as the link.
    private let owner: any Sendable

    init(_ connector: HubConnector, owner: any Sendable) {
        self.connector = connector
        self.owner = owner
    }

    /// Asks the link to stop and returns at once: releasing a link never blocks.
    deinit {
        connector.signalStop()
    }

    /// Where the link syncs.
    public var configuration: HubConfiguration { connector.configuration }

    /// The link's state now.
    public var status: HubStatus { connector.status }

    /// Stops syncing and closes the connection (waiting up to five seconds for a statement in
    /// flight).
    public func stop() {
        connector.stop()
    }
}
