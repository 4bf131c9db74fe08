/// Where a store keeps its entries durably. The store's cache is the source of reads; a backend
/// only loads everything once and then persists each committed batch atomically.
///
/// Used by exactly one writer at a time (the store's writer lock), so it need not be thread-safe.
protocol SettingsBackend: AnyObject {
    /// The replica's identity, its entries (tombstones included) and its highest sequence number.
    func load() throws(SettingsError) -> LoadedReplica

    /// Persists `entries`, and the peer cursor if given, in one atomic commit; when it returns,
    /// they are durable.
    func write(_ entries: [SettingEntry], cursor: PeerCursor?) throws(SettingsError)
}

/// How far this replica has applied a peer's changes: the last of the peer's sequence numbers.
struct PeerCursor {
    let peer: ReplicaID
    let receivedSequence: Int64
    let contactMilliseconds: UInt64
}

/// What a backend holds when a store opens it.
struct LoadedReplica {
    var replicaID: ReplicaID
    var entries: [SettingEntry]
    var peerCursors: [ReplicaID: Int64] = [:]
}
