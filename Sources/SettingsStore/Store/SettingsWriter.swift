/// The single-writer half of a store: the backend, the clock and the sequence counter.
///
/// Only ever used under the store's writer lock, which is what makes each commit, and each
/// read-modify-write, atomic.
struct SettingsWriter {
    var backend: (any SettingsBackend)?
    var ownerLock: OwnerLock?
    var clock: HybridLogicalClock
    var lastSequence: Int64
    /// Per peer, the last of its sequence numbers applied here (absent: never synced).
    var peerCursors: [ReplicaID: Int64]

    /// Stamps `writes` with fresh versions and sequence numbers, persists them and returns them.
    /// Nothing is consumed (clock readings aside) when the backend fails.
    mutating func commit(_ writes: [StagedWrite], replica: ReplicaID, path: String) throws(SettingsError)
        -> [SettingEntry]
    {
        guard let backend else { throw .closed(path: path) }
        var sequence = lastSequence
        // One transaction is one instant: each key appears once in it, so one stamp orders them all.
        let version = SettingVersion(timestamp: clock.tick(), replica: replica)
        let records = writes.map { write in
            sequence += 1
            return SettingEntry(key: write.key, value: write.value, version: version, sequence: sequence)
        }
        try backend.write(records, cursor: nil)
        lastSequence = sequence
        return records
    }
}

/// A write that passed the limits and changes something.
struct StagedWrite {
    let key: String
    let value: SettingValue?
}
