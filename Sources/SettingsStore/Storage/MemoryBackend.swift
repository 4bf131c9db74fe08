/// A backend that keeps nothing beyond the store's own cache: for tests and throwaway stores.
final class MemoryBackend: SettingsBackend {
    private let replicaID: ReplicaID

    init(replicaID: ReplicaID) {
        self.replicaID = replicaID
    }

    func load() -> LoadedReplica {
        LoadedReplica(replicaID: replicaID, entries: [], lineage: Lineage(startingAt: 0))
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?) {}

    func adopt(_ replicaID: ReplicaID, lineage: Lineage) {}

    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) {}
}
