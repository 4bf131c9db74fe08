/// The single-writer half of a store: the backend, the clock and the sequence counter.
///
/// Only ever used under the store's writer lock, which is what makes each commit, and each
/// read-modify-write, atomic.
struct SettingsWriter {
    var backend: (any SettingsBackend)?
    var ownerLock: OwnerLock?
    var clock: HybridLogicalClock
    /// Where `lastSequence` and `historyCount` are published for readers that take no lock.
    let gauges: WriterGauges
    var lastSequence: Int64 {
        didSet { gauges.publish(lastSequence: lastSequence) }
    }
    /// Per peer, the last of its sequence numbers applied here and its incarnation then
    /// (absent: never synced).
    var peers: [ReplicaID: PeerRecord]
    /// This replica's incarnations, the running one last.
    var lineage: Lineage
    /// Tombstones below this stamp have been collected: an entry older than it, for a key this
    /// replica does not hold, may be one deleted long ago and is not taken back.
    var tombstoneHorizon: HybridTimestamp
    /// How many history records the database holds.
    var historyCount: Int {
        didSet { gauges.publish(historyCount: historyCount) }
    }
    /// The hub namespace the store syncs as (nil: it never joined one).
    var account: SyncAccount? = nil
    /// Hub links running on the store: while there is one, a socket peer's account never moves
    /// the store (`Settings.meet(account:)`).
    var accountPins = 0

    /// Versions local writes: one transaction is one instant, and each key appears once in it,
    /// so one fresh stamp orders them all. The stamp is above every version the writes replace,
    /// whatever the wall clock says: a write that saw a version always beats it.
    ///
    /// A write known to have been made earlier than now (`madeBy`: a dconf change found at
    /// start-up, made at the latest when dconf last wrote its file) is stamped then, or just above
    /// what it replaces when that is later, so a write made elsewhere in between still wins.
    mutating func stamp(_ writes: [StagedWrite], replica: ReplicaID, madeBy: HybridTimestamp? = nil)
        -> [SettingEntry]
    {
        let floor = writes.reduce(HybridTimestamp.zero) { max($0, $1.replaces ?? .zero) }
        let timestamp = madeBy.map { $0 > floor ? $0 : floor.successor } ?? clock.tick(above: floor)
        let version = SettingVersion(timestamp: timestamp, replica: replica)
        return writes.map { SettingEntry(key: $0.key, value: $0.value, version: version, sequence: 0) }
    }

    /// Gives versioned `entries` the next sequence numbers and persists them with `cursor` and
    /// the history records `history` makes of them, atomically; returns them as stored. Nothing
    /// is consumed when the backend fails.
    mutating func persist(
        _ entries: [SettingEntry], cursor: PeerCursor?, path: String,
        history: ([SettingEntry]) -> [ChainedRecord] = { _ in [] }
    ) throws(SettingsError) -> [SettingEntry] {
        guard let backend else { throw .closed(path: path) }
        var sequence = lastSequence
        let records = entries.map { entry in
            sequence += 1
            return SettingEntry(
                key: entry.key, value: entry.value, version: entry.version, sequence: sequence)
        }
        let changes = history(records)
        try backend.write(records, cursor: cursor, history: changes)
        historyCount += changes.count
        lastSequence = sequence
        if let cursor { peers[cursor.peer] = cursor.record }
        return records
    }
}

/// A write that passed the limits and changes something.
struct StagedWrite {
    let key: String
    let value: SettingValue?
    /// The timestamp of the key's current version (a tombstone's included), if it has one.
    let replaces: HybridTimestamp?
    /// Who asked for the write, for the history.
    var actor: ChangeActor? = nil
}
