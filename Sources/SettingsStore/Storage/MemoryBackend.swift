/// A backend that keeps nothing beyond the store's own cache but the history: for tests and
/// throwaway stores.
final class MemoryBackend: SettingsBackend {
    private let replicaID: ReplicaID
    /// The records' sequence numbers, oldest first.
    private var order: [Int64] = []
    private var records: [Int64: ChainedRecord] = [:]
    private var names: [ReplicaID: String] = [:]
    private var fleetPolicies: [String: String] = [:]

    package init(replicaID: ReplicaID) {
        self.replicaID = replicaID
    }

    func load(streamingTo sink: (any LoadedEntriesSink)?) -> LoadedReplica {
        LoadedReplica(replicaID: replicaID, entries: [], lineage: Lineage(startingAt: 0))
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?, history: [ChainedRecord]) {
        for link in history {
            order.append(link.record.sequence)
            records[link.record.sequence] = link
        }
    }

    func recentHistory(_ query: HistoryQuery) -> [HistoryRecord] {
        var selected: [HistoryRecord] = []
        for sequence in order.reversed() where selected.count < query.limit {
            guard let record = records[sequence]?.record else { continue }
            if let since = query.sinceMilliseconds, record.timeMilliseconds < since { continue }
            if let until = query.untilMilliseconds, record.timeMilliseconds > until { continue }
            selected.append(record)
        }
        return selected
    }

    func historyRecords(after sequence: Int64, limit: Int) -> [HistoryRecord] {
        // `order` ascends: the first record after `sequence` is found by halving.
        var (low, high) = (0, order.count)
        while low < high {
            let middle = (low + high) / 2
            if order[middle] <= sequence { low = middle + 1 } else { high = middle }
        }
        return order[low...].prefix(limit).compactMap { records[$0]?.record }
    }

    func chainedRecord(at sequence: Int64) -> ChainedRecord? {
        records[sequence]
    }

    func historyCount() -> Int {
        order.count
    }

    func oldestHistoryTime() -> UInt64? {
        order.first.flatMap { records[$0]?.record.timeMilliseconds }
    }

    func pruneHistory(before: UInt64, excess: Int, batch: Int) -> Int {
        let removed =
            excess > 0
            ? min(batch, excess)
            : order.prefix(batch).prefix { (records[$0]?.record.timeMilliseconds ?? 0) < before }.count
        for sequence in order.prefix(removed) { records.removeValue(forKey: sequence) }
        order.removeFirst(removed)
        return removed
    }

    func adopt(_ replicaID: ReplicaID, lineage: Lineage) {}

    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) {}

    func recordAccount(_ account: SyncAccount, forgetting keys: [String], resettingCursors: Bool) {}

    func replicaNames() -> [ReplicaID: String] { names }

    func saveName(_ name: String, ofReplica replica: ReplicaID) {
        names[replica] = name
    }

    func fleetPolicy(from source: String) -> String? { fleetPolicies[source] }

    func saveFleetPolicy(_ text: String?, from source: String) {
        fleetPolicies[source] = text
    }
}
