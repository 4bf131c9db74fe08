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
    /// Reads every replica folder in the folder.
    func scanAll() throws(SettingsError) {
        let names = try FileSystem.files(in: root)
        var replicas: [ReplicaID] = []
        for name in names where name != localID.description {
            if let replica = replicaFolder(named: name) { replicas.append(replica) }
        }
        if replicas.count > Self.maximumReplicas {
            logger?.log(
                .warning,
                "folder \(root): \(replicas.count) replica folders, reading the first \(Self.maximumReplicas) (remove the folders of machines that are gone)"
            )
            replicas = Array(replicas.prefix(Self.maximumReplicas))
        }
        for replica in replicas {
            if readers[replica] == nil { watcher?.watch(replica: replica.description) }
            try scan(replica)
        }
    }

    /// Warns once that `name` in `folder` is a copy a syncer made, and skips it.
    private func warnSyncerCopy(_ name: String, in folder: String) {
        warnOnce(
            folder + "/" + name,
            "skipping '\(name)': a copy the folder's syncer made (settingsd never edits a file in place)")
    }

    /// The replica whose folder `name` in the folder is; nil (warned once) for anything else:
    /// a syncer's temporaries (silently), its conflict copies, files and folders not settingsd's.
    func replicaFolder(named name: String) -> ReplicaID? {
        guard name != FolderFileName.sealName else { return nil }
        switch FolderFileName(name) {
        case .temporary:
            return nil
        case .syncerCopy:
            warnSyncerCopy(name, in: root)
            return nil
        default:
            break
        }
        guard let replica = ReplicaID(name), isDirectory(root + "/" + name) else {
            warnOnce(
                root + "/" + name,
                "skipping '\(name)': not a replica's folder (settingsd's names are replica ids)")
            return nil
        }
        return replica
    }

    /// Reads `replica`'s folder: its state file, then its files past what was applied, in order;
    /// a batch past a gap is applied too, but moves the cursor only once the gap is filled (or a
    /// snapshot covers it).
    func scan(_ replica: ReplicaID) throws(SettingsError) {
        guard readers[replica] != nil || readers.count < Self.maximumReplicas else { return }
        var reader = readers[replica] ?? Reader()
        // Its status is reported by the write that follows every scan (`publish()`).
        defer { readers[replica] = reader }
        let folder = root + "/" + replica.description
        let listing = files(in: folder)
        if listing.hasState,
            let bytes = try? FileSystem.read(
                folder + "/" + FolderFileName.stateName, limit: FolderReplicaState.maximumBytes)
        {
            reader.state = try? FolderReplicaState.read(bytes, replica: replica)
        }
        var cursor = settings.receivedSequence(from: replica) ?? 0
        reader.waitingFor = nil
        var pending = listing.batches.filter { $0.last > cursor }.sorted { $0.first < $1.first }
        while true {
            // The batch that continues the cursor, else the newest snapshot past it.
            if let index = pending.firstIndex(where: { $0.first <= cursor + 1 }) {
                let batch = pending.remove(at: index)
                guard let file = read(batch.name, in: folder, of: replica, name: batch.kind, reader: &reader)
                else {
                    reader.waitingFor = batch.name
                    break
                }
                try apply(file, from: replica, moving: true, reader: &reader, name: batch.name)
                cursor = max(cursor, file.last)
                pending.removeAll { $0.last <= cursor }
            } else if let snapshot = listing.snapshots.filter({ $0.through > cursor }).max(by: {
                $0.through < $1.through
            }),
                let file = read(snapshot.name, in: folder, of: replica, name: snapshot.kind, reader: &reader)
            {
                try apply(file, from: replica, moving: true, reader: &reader, name: snapshot.name)
                cursor = max(cursor, file.last)
                pending.removeAll { $0.last <= cursor }
            } else {
                break
            }
        }
        // Past a gap: applied now (versions make it safe), the cursor waits for the gap.
        for batch in pending where !reader.appliedAhead.contains(batch.name) {
            if reader.waitingFor == nil { reader.waitingFor = "the files before \(batch.name)" }
            guard let file = read(batch.name, in: folder, of: replica, name: batch.kind, reader: &reader)
            else { continue }
            try apply(file, from: replica, moving: false, reader: &reader, name: batch.name)
        }
        reader.appliedAhead = reader.appliedAhead.filter { name in pending.contains { $0.name == name } }
    }

    /// This replica's own folder: files of its id written under an incarnation its lineage does
    /// not continue are a copy of its store running elsewhere (or restored from a backup), and
    /// it takes a new id; files found missing are written again.
    func scanOwnFolder() throws(SettingsError) {
        let listing = files(in: ownFolder)
        let sequence = settings.sequence
        let tag = FolderFileName.tag(of: incarnation)
        var present: Int64 = 0
        ownBatches = [:]
        ownSnapshot = nil
        for batch in listing.batches {
            if case .batch(_, _, let fileTag) = batch.kind, fileTag != tag {
                try checkLineage(batch.name, last: batch.last, sequence: sequence)
            }
            ownBatches[batch.name] = (batch.last, fileSize(ownFolder + "/" + batch.name))
            present = max(present, batch.last)
        }
        for snapshot in listing.snapshots {
            if case .snapshot(_, let fileTag) = snapshot.kind, fileTag != tag {
                try checkLineage(snapshot.name, last: snapshot.through, sequence: sequence)
            }
            if snapshot.through >= (ownSnapshot?.through ?? 0) {
                ownSnapshot = (snapshot.name, snapshot.through, fileSize(ownFolder + "/" + snapshot.name))
            }
            present = max(present, snapshot.through)
        }
        if present < writtenThrough || (writtenThrough == 0 && consideredThrough == 0) {
            // Files gone (removed, or the folder restored from an old copy): written again from
            // there on; readers apply what they hold already as no change.
            writtenThrough = present
            consideredThrough = present
        }
        // Files missing in the middle (removed by hand, a restored copy's older ones) would stop
        // every reader there: a snapshot covers everything again.
        var covered = ownSnapshot?.through ?? 0
        for batch in listing.batches.sorted(by: { $0.first < $1.first }) where batch.first <= covered + 1 {
            covered = max(covered, batch.last)
        }
        needsSnapshot = covered < present
        // Files sealed otherwise than the folder (it was plain, or sealed under an older key):
        // a sealed snapshot replaces them.
        let own = listing.batches.map(\.name) + listing.snapshots.map(\.name)
        if !own.allSatisfy(isSealedAsFolder) { needsSnapshot = true }
    }

    /// Throws `replicaForked` (after taking a new id) when a file of this replica's id, written
    /// under another incarnation, is not one its history continues.
    private func checkLineage(_ name: String, last: Int64, sequence: Int64) throws(SettingsError) {
        guard lineageChecked.insert(name).inserted else { return }
        guard let header = ownFileHeader(name), let text = try? header.string("incarnation"),
            let incarnation = UUID(uuidString: text)
        else { return }
        guard !settings.lineage.continues(cursor: last, recordedUnder: incarnation, sequence: sequence) else {
            return
        }
        let message =
            "the folder holds '\(name)' of this replica's id that its history (now at \(sequence)) did not write: its store was copied to another machine or restored from a backup; taking a new replica id"
        logger?.log(.warning, "folder \(root): \(message)")
        update { $0.lastFork = message }
        _ = try settings.takeNewIdentity(ifStill: localID)
        throw SettingsError(
            .replicaForked, "this replica took a new id after a fork; starting over in the folder")
    }

    /// The header (first line, within its first 4 KiB) of this replica's own file `name`; nil
    /// when it cannot be read or parsed.
    func ownFileHeader(_ name: String) -> JSONFields? {
        let fd = Glibc.open(ownFolder + "/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var head = [UInt8](repeating: 0, count: 4_096)
        let count = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        close(fd)
        let firstLine = Array(head.prefix(max(0, count)).prefix { $0 != UInt8(ascii: "\n") })
        return try? JSONFields(parsing: firstLine[...], what: "the header")
    }

    /// Reads one file of `replica`'s; nil when it is not whole yet (read again when it changes)
    /// or refused (counted and logged once).
    private func read(
        _ file: String, in folder: String, of replica: ReplicaID, name: FolderFileName, reader: inout Reader
    ) -> FolderFile? {
        let path = folder + "/" + file
        let bytes: [UInt8]
        do throws(SettingsError) {
            bytes = try FileSystem.read(path, limit: FolderFile.maximumBytes)
        } catch {
            // Removed meanwhile (a compaction), or unreadable: the next event says more.
            return nil
        }
        switch FolderFile.read(bytes, replica: replica, name: name, sealer: sealer) {
        case .complete(let file):
            reader.incomplete[path] = nil
            noteRefused(file.refusals, in: path)
            return file
        case .incomplete(let reason):
            if reader.incomplete[path] != bytes.count {
                reader.incomplete[path] = bytes.count
                logger?.log(
                    .debug,
                    "folder \(root): '\(path)' is not whole yet (\(reason)); reading it again when it changes"
                )
            }
            return nil
        case .invalid(let reason):
            if !warned.contains(path) { update { $0.refusedFiles += 1 } }
            warnOnce(path, "refusing '\(path)': \(reason)")
            return nil
        }
    }

    /// Applies a file's entries through the store's arrival gate; `moving`: records its last
    /// sequence number as the replica's cursor, in the same transaction.
    private func apply(
        _ file: FolderFile, from replica: ReplicaID, moving: Bool, reader: inout Reader, name: String
    ) throws(SettingsError) {
        let isInitial = settings.receivedSequence(from: replica) == nil
        var start = 0
        repeat {
            let end = min(file.entries.count, start + Self.batchEntries)
            let isLast = end == file.entries.count
            let outcome = try settings.applyRemote(
                Array(file.entries[start..<end]), from: replica, through: moving && isLast ? file.last : nil,
                reason: isInitial ? .initialSync : .replica, peerIncarnation: file.incarnation)
            if let sequences = outcome.sequences { fromFolder.append(sequences) }
            start = end
        } while start < file.entries.count
        if !moving { reader.appliedAhead.insert(name) }
        reader.lastFile = name
        if fromFolder.count > 64 { fromFolder = Self.merged(fromFolder) }
    }

    /// Ranges merged where they touch.
    static func merged(_ ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound + 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// The settingsd files in a replica's folder, by kind; the rest is skipped (warned once).
    func files(in folder: String) -> FolderListing {
        var listing = FolderListing()
        let names = (try? FileSystem.files(in: folder)) ?? []
        for name in names {
            let kind = FolderFileName(name)
            switch kind {
            case .batch(let first, let last, _):
                listing.batches.append((name, first, last, kind))
            case .snapshot(let through, _):
                listing.snapshots.append((name, through, kind))
            case .state:
                listing.hasState = true
            case .temporary:
                continue
            case .syncerCopy:
                warnSyncerCopy(name, in: folder)
            case .foreign:
                warnOnce(folder + "/" + name, "skipping '\(name)' in '\(folder)': not a settingsd file")
            }
        }
        return listing
    }

    private func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    private func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}

/// The settingsd files found in one replica's folder.
struct FolderListing {
    var batches: [(name: String, first: Int64, last: Int64, kind: FolderFileName)] = []
    var snapshots: [(name: String, through: Int64, kind: FolderFileName)] = []
    var hasState = false
}
