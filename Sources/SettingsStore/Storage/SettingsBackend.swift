#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Where a store keeps its entries durably. The store's cache is the source of reads; a backend
/// only loads everything once and then persists each committed batch atomically.
///
/// Used by exactly one writer at a time (the store's writer lock), so it need not be thread-safe.
protocol SettingsBackend: AnyObject {
    /// The replica's identity, its entries (tombstones included) and its highest sequence number.
    ///
    /// A backend may hand the entries to `sink` as it reads them, in chunks, instead of returning
    /// them (`LoadedReplica.isStreamed`).
    func load(streamingTo sink: (any LoadedEntriesSink)?) throws(SettingsError) -> LoadedReplica

    /// Persists `entries`, the peer cursor if given, and the history records of the change, in
    /// one atomic commit; when it returns, they are durable. The records, when there are any,
    /// follow the entries one for one.
    func write(_ entries: [SettingEntry], cursor: PeerCursor?, history: [ChainedRecord]) throws(SettingsError)

    /// The records of every key that `query`'s times select, newest first (its key is ignored:
    /// a key's records are found by walking its chain, `history(following:query:)`).
    func recentHistory(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord]

    /// The records numbered after `sequence`, oldest first, at most `limit`.
    func historyRecords(after sequence: Int64, limit: Int) throws(SettingsError) -> [HistoryRecord]

    /// The record of the change numbered `sequence`, if the history holds it.
    func chainedRecord(at sequence: Int64) throws(SettingsError) -> ChainedRecord?

    /// How many history records there are.
    func historyCount() throws(SettingsError) -> Int

    /// The time of the oldest history record kept (milliseconds since 1970), or nil.
    func oldestHistoryTime() throws(SettingsError) -> UInt64?

    /// Deletes the oldest records: up to `batch` of them when `excess` records are over the
    /// maximum, else those among the oldest `batch` older than `before` (milliseconds since
    /// 1970); returns how many it deleted.
    func pruneHistory(before: UInt64, excess: Int, batch: Int) throws(SettingsError) -> Int

    /// Replaces the replica's identity and lineage (after a fork was detected), durably.
    func adopt(_ replicaID: ReplicaID, lineage: Lineage) throws(SettingsError)

    /// Deletes the tombstones stamped below `cutoff` and records `horizon`, in one commit.
    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) throws(SettingsError)

    /// Deletes the entries of `keys` (tombstones: an account change leaves no trace of the old
    /// account's keys), with every peer's cursor when `resettingCursors`, and records `account`,
    /// in one commit.
    func recordAccount(_ account: SyncAccount, forgetting keys: [String], resettingCursors: Bool)
        throws(SettingsError)

    /// The names replicas were last known by (`meta`'s `replica_name:<id>` rows).
    func replicaNames() throws(SettingsError) -> [ReplicaID: String]

    /// Records `name` for `replica`, durably.
    func saveName(_ name: String, ofReplica replica: ReplicaID) throws(SettingsError)

    /// The fleet policies `source` last assigned (`meta`'s `fleet_policy:<source>` row), as
    /// recorded by `saveFleetPolicy`.
    func fleetPolicy(from source: String) throws(SettingsError) -> String?

    /// Records the fleet policies `source` assigns (nil: none), durably.
    func saveFleetPolicy(_ text: String?, from source: String) throws(SettingsError)
}

/// What a replica remembers of a peer: the last of its sequence numbers applied here, and the
/// peer's incarnation then (nil in records older than incarnations).
package struct PeerRecord: Equatable {
    package var receivedSequence: Int64
    package var incarnation: UUID?
}

/// How far this replica has applied a peer's changes: the last of the peer's sequence numbers.
struct PeerCursor {
    let peer: ReplicaID
    let record: PeerRecord
    let contactMilliseconds: UInt64
}

/// Takes a store's entries while its backend is still reading them (`SettingsBackend.load`).
protocol LoadedEntriesSink: AnyObject {
    /// About how many entries will come, said before the first.
    func expect(_ count: Int)
    /// The next entries, in the order the backend read them.
    func receive(_ entries: [SettingEntry])
    /// Every entry has come.
    func endOfEntries()
}

/// What a backend holds when a store opens it.
struct LoadedReplica {
    var replicaID: ReplicaID
    /// The entries, unless they went to the load's sink (`isStreamed`): then empty.
    var entries: [SettingEntry]
    /// Whether the load's sink received every entry, each key once, and `entries` is empty.
    var isStreamed = false
    var peers: [ReplicaID: PeerRecord] = [:]
    /// The lineage, its running incarnation begun by this load (a reader's is not stored).
    var lineage: Lineage
    /// Tombstones below this stamp have been collected (zero: none ever).
    var tombstoneHorizon = HybridTimestamp.zero
    /// How many history records there are.
    var historyCount = 0
    /// The highest sequence number the file has given out (its rows, its folded and owed
    /// history records): the next change numbers after it, even when the rows that held the
    /// highest ones vanished (a damaged file), so no number is given out twice and no peer's
    /// cursor is already past the next change.
    var lastSequence: Int64 = 0
    /// The key of this store's secret fingerprints (kept in the file; random for memory stores).
    var fingerprintKey = FingerprintKey.random()
    /// The hub namespace the store syncs as, if it ever joined one.
    var account: SyncAccount? = nil
}
