/// A backend that keeps nothing beyond the store's own cache but the history: for tests and
/// throwaway stores.
final class MemoryBackend: SettingsBackend {
    private let replicaID: ReplicaID
    /// Oldest first.
    private var records: [HistoryRecord] = []

    init(replicaID: ReplicaID) {
        self.replicaID = replicaID
    }

    func load() -> LoadedReplica {
        LoadedReplica(replicaID: replicaID, entries: [], lineage: Lineage(startingAt: 0))
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?, history: [HistoryRecord]) {
        records += history
    }

    func history(_ query: HistoryQuery) -> [HistoryRecord] {
        var selected: [HistoryRecord] = []
        for record in records.reversed() where selected.count < query.limit {
            if let key = query.keyOrPrefix {
                guard key.hasSuffix(".") ? KeyIdentity.hasPrefix(record.key, key) : record.key == key else {
                    continue
                }
            }
            if let since = query.sinceMilliseconds, record.timeMilliseconds < since { continue }
            if let until = query.untilMilliseconds, record.timeMilliseconds > until { continue }
            selected.append(record)
        }
        return selected
    }

    func historyCount() -> Int {
        records.count
    }

    func pruneHistory(before: UInt64, excess: Int, batch: Int) -> Int {
        let removed =
            excess > 0
            ? min(batch, excess) : records.prefix(batch).prefix { $0.timeMilliseconds < before }.count
        records.removeFirst(removed)
        return removed
    }

    func adopt(_ replicaID: ReplicaID, lineage: Lineage) {}

    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) {}
}
