import SettingsStore

extension FolderConnector {
    /// Updates `status` for `replica`, and writes a snapshot when the two have read each other's
    /// files and still differ (a file removed by hand, a damaged one), so the other can repair.
    func report(_ replica: ReplicaID, _ reader: Reader) {
        let readThrough = settings.receivedSequence(from: replica) ?? 0
        let agreement = agreement(with: replica, reader, readThrough: readThrough)
        let entry = FolderStatus.Replica(
            replica: replica, readThrough: readThrough, publishedThrough: reader.state?.published,
            lastFile: reader.lastFile, agreement: agreement, waitingFor: reader.waitingFor)
        update { status in
            if let index = status.replicas.firstIndex(where: { $0.replica == replica }) {
                status.replicas[index] = entry
            } else {
                status.replicas.append(entry)
                status.replicas.sort { $0.replica < $1.replica }
            }
        }
    }

    /// `agreed`, `reading`, `not read by it yet`, `diverged` or `unknown` (see
    /// `FolderStatus.Replica.agreement`).
    private func agreement(with replica: ReplicaID, _ reader: Reader, readThrough: Int64) -> String {
        guard let other = reader.state else { return "unknown" }
        let (sequence, digest) = settings.sequenceAndDigest
        // Its digest describes exactly what it had published when it wrote the state: compared
        // only when this replica has applied exactly that much of it (more arrived since: its
        // next state file says more).
        guard readThrough == other.published, reader.appliedAhead.isEmpty, reader.waitingFor == nil else {
            return "reading"
        }
        guard other.considered >= other.sequence, (other.read[localID] ?? 0) >= writtenThrough,
            consideredThrough >= sequence
        else { return "not read by it yet" }
        // Both read the same of every third replica: otherwise the digests differ by what one
        // has read and the other not yet.
        for (third, through) in other.read where third != localID {
            guard readers[third] != nil, (settings.receivedSequence(from: third) ?? 0) == through else {
                return "not read by it yet"
            }
        }
        // A sealed folder's state files hold the digest masked (`EntrySealer.masked`).
        guard other.digest != (sealer.map { $0.masked(digest) } ?? digest) else {
            repairedAt[replica] = nil
            return "agreed"
        }
        if repairedAt[replica] != sequence {
            // Everything of each other's read, and still different: what one holds is missing
            // from its files. A snapshot of this replica's entries lets the other take what it
            // lacks; the other does the same.
            repairedAt[replica] = sequence
            queue.async { [weak self] in
                self?.run { () throws(SettingsError) in
                    guard let self else { return }
                    self.logger?.log(
                        .warning,
                        "folder \(self.root): replica \(replica) read every file of this one and still differs; writing a snapshot to repair"
                    )
                    try self.writeSnapshot(complete: true)
                    try self.writeState()
                }
            }
        }
        return "diverged"
    }
}
