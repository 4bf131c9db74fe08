import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

extension FolderConnector {
    /// Writes the local entries not yet in the folder as batch files (but those that came from
    /// the folder, or whose writer writes in it itself, and keys of scope `local`), compacts
    /// when the batches outgrow a snapshot, and writes the state file if it changed.
    func publish() throws(SettingsError) {
        let policy = settings.policy
        while true {
            let candidates = settings.entries(after: consideredThrough, limit: Self.batchEntries)
            guard let last = candidates.last?.sequence else { break }
            let needed = candidates.filter { isPublished($0, policy: policy) }
            if !needed.isEmpty {
                let file = FolderFile(
                    kind: .batch, replica: localID, incarnation: incarnation, first: writtenThrough + 1,
                    last: last,
                    entries: needed)
                let name = FolderFileName.batchName(
                    first: file.first, last: last, tag: FolderFileName.tag(of: incarnation))
                let bytes = try write(file.encoded(sealedBy: sealer), as: name)
                ownBatches[name] = (last, bytes)
                writtenThrough = last
            }
            consideredThrough = last
        }
        update { $0.publishedThrough = consideredThrough }
        if needsCompaction || needsSnapshot { try writeSnapshot() }
        try writeState()
        // What this replica holds and wrote changed: so does its agreement with each other.
        for (replica, reader) in readers { report(replica, reader) }
    }

    /// Whether `entry` is this replica's to write to the folder.
    func isPublished(_ entry: SettingEntry, policy: SettingsPolicy) -> Bool {
        let writer = entry.version.replica
        return !fromFolder.contains { $0.contains(entry.sequence) }
            && (writer == localID || readers[writer] == nil)
            && (policy.isEmpty || !policy.isLocal(entry.key))
            && (entry.value?.nestingDepth ?? 0) <= SettingValue.maximumNestingDepth
    }

    /// Whether the own batches cost more than a snapshot would.
    private var needsCompaction: Bool {
        let bytes = ownBatches.values.reduce(0) { $0 + $1.bytes }
        return ownBatches.count > Self.compactionFiles
            || bytes > max(Self.compactionBytes, ownSnapshot?.bytes ?? 0)
    }

    /// Writes every entry this replica publishes as one snapshot through `consideredThrough`,
    /// then removes the batches and the snapshot it replaces. A reader whose batches are gone
    /// reads the snapshot (tombstones included, so no delete is undone). A `complete` one (to
    /// repair a replica that differs) holds every shared entry, whoever wrote it.
    func writeSnapshot(complete: Bool = false) throws(SettingsError) {
        let policy = settings.policy
        let entries = settings.entries(after: 0).filter { entry in
            entry.sequence <= consideredThrough
                && (complete
                    ? (policy.isEmpty || !policy.isLocal(entry.key))
                        && (entry.value?.nestingDepth ?? 0) <= SettingValue.maximumNestingDepth
                    : isPublished(entry, policy: policy))
        }
        let through = max(consideredThrough, 1)
        let name = FolderFileName.snapshotName(through: through, tag: FolderFileName.tag(of: incarnation))
        let file = FolderFile(
            kind: .snapshot, replica: localID, incarnation: incarnation, first: 1, last: through,
            entries: entries)
        let bytes = try write(file.encoded(sealedBy: sealer), as: name)
        let replaced =
            ownBatches.filter { $0.value.last <= through }.map(\.key) + [ownSnapshot?.name].compactMap { $0 }
        ownSnapshot = (name, through, bytes)
        writtenThrough = max(writtenThrough, through)
        needsSnapshot = false
        for old in replaced where old != name {
            unlink(ownFolder + "/" + old)
            ownBatches[old] = nil
        }
    }

    /// Writes the state file when what it says changed.
    func writeState() throws(SettingsError) {
        let (sequence, digest) = settings.sequenceAndDigest
        var read: [ReplicaID: Int64] = [:]
        for replica in readers.keys { read[replica] = settings.receivedSequence(from: replica) ?? 0 }
        let state = FolderReplicaState(
            replica: localID, incarnation: incarnation, published: writtenThrough,
            considered: consideredThrough,
            sequence: sequence, digest: sealer.map { $0.masked(digest) } ?? digest, read: read)
        guard state != lastState else { return }
        // Not synced to disk: a state file lost in a crash is written again at the next change,
        // and until then others read the agreement as `unknown`.
        _ = try write(state.encoded(), as: FolderFileName.stateName, durable: false)
        lastState = state
    }

    /// Writes `bytes` to `name` in this replica's folder: to a hidden temporary name first,
    /// synced to disk when `durable`, then renamed into place, so a syncer (and a reader) only
    /// ever sees it whole. Returns its size.
    func write(_ bytes: [UInt8], as name: String, durable: Bool = true) throws(SettingsError) -> Int {
        try FileSystem.writeAtomically(bytes, to: ownFolder + "/" + name, durable: durable)
        return bytes.count
    }
}
