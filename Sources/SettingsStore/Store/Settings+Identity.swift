extension Settings {
    /// This replica's incarnations, the running one last.
    package var lineage: Lineage {
        writer.withLock { $0.lineage }
    }

    /// What this replica remembers of `peer`, or nil if it never applied anything from it.
    package func record(of peer: ReplicaID) -> PeerRecord? {
        writer.withLock { $0.peers[peer] }
    }

    /// Takes a new replica id and a fresh lineage, durably, because this replica's history
    /// forked (its file was restored from a backup, or copied and opened elsewhere): under the new
    /// id every peer sends it everything and receives everything from it, so what either side
    /// wrote since the fork reaches the other. Entries keep the versions they were written with.
    /// Replication hears of it as a commit notice (`identity`): its sessions close and its links
    /// reconnect under the new id.
    ///
    /// - Parameter ifStill: Only rename if the id is still this one (another session may have
    ///   renamed the replica already).
    /// - Returns: The new id, or nil when `ifStill` no longer holds.
    @discardableResult
    package func takeNewIdentity(ifStill current: ReplicaID) throws(SettingsError) -> ReplicaID? {
        let renamed = try writer.withLock { (writer) throws(SettingsError) -> ReplicaID? in
            guard identity.withLock({ $0 }) == current else { return nil }
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            let id = ReplicaID.random()
            let lineage = Lineage(startingAt: writer.lastSequence)
            try backend.adopt(id, lineage: lineage)
            writer.lineage = lineage
            identity.withLock { $0 = id }
            observers.enqueue(CommitNotice(kind: .identity, sequence: writer.lastSequence))
            return id
        }
        observers.deliverPending()
        return renamed
    }
}
