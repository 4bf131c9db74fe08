import Synchronization

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// The replicator of each store a test syncs, created on first use: a store has one replicator,
/// as in an app, whatever number of links the test makes. Held weakly (links and in-process
/// links keep theirs alive), so a store the test releases is freed with its replicator.
private let replicators = Mutex<[ObjectIdentifier: WeakReplicator]>([:])

private struct WeakReplicator: Sendable {
    weak var replicator: Replicator?
}

extension Settings {
    /// This store's replicator in a test.
    var replicator: Replicator {
        replicators.withLock { table in
            if let existing = table[ObjectIdentifier(self)]?.replicator, existing.settings === self {
                return existing
            }
            table = table.filter { $0.value.replicator != nil }
            let created = Replicator(settings: self)
            table[ObjectIdentifier(self)] = WeakReplicator(replicator: created)
            return created
        }
    }

    /// The peers of this store's replicator.
    var peers: [PeerStatus] { replicator.peers }

    /// The links of this store's replicator.
    var links: [LinkStatus] { replicator.links }

    /// The hub links of this store's replicator.
    var hubs: [HubStatus] { replicator.hubs }

    /// Syncs with the replica at `socketPath` through this store's replicator.
    func sync(with socketPath: String, handshakeTimeout: Duration = ReplicaLink.defaultHandshakeTimeout)
        -> ReplicaLink
    {
        replicator.sync(with: socketPath, handshakeTimeout: handshakeTimeout)
    }

    /// Syncs with a hub through this store's replicator.
    func sync(withHub configuration: HubConfiguration) throws(SettingsError) -> HubLink {
        try replicator.sync(withHub: configuration)
    }
}
