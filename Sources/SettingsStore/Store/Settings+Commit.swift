/// A batch of versioned changes on its way into a store, whatever its source.
struct Commit {
    /// The changes, versioned; their sequence numbers are assigned by the commit.
    var entries: [SettingEntry]
    /// Why they happen, as announced to observers.
    var reason: ChangeReason
    /// The replica that made them.
    var origin: ReplicaID
    /// For changes from a peer: how far through its log they take this replica.
    var cursor: PeerCursor? = nil
    /// Changes from a peer that the limits refused, announced with `quotaViolation`.
    var refused: [SettingsChange.KeyChange] = []
}

extension Settings {
    /// The one path by which changes enter the store, for local writes, imports, resets and
    /// replicas alike: persist atomically, then update memory, then queue the announcement
    /// (delivered by the caller once the writer lock is released, so observers may write).
    ///
    /// Call it under the writer lock, with entries the limits already admitted.
    func commit(_ commit: Commit, writer: inout SettingsWriter) throws(SettingsError) -> [SettingEntry] {
        let records = try writer.persist(commit.entries, cursor: commit.cursor, path: displayPath)
        cache.withLock { $0.apply(records) }
        if !records.isEmpty {
            let changes = records.map(SettingsChange.KeyChange.init)
            observers.enqueue(SettingsChange(reason: commit.reason, origin: commit.origin, changes: changes))
        }
        if !commit.refused.isEmpty {
            observers.enqueue(
                SettingsChange(reason: .quotaViolation, origin: commit.origin, changes: commit.refused))
        }
        return records
    }

    /// Applies entries received from `peer` (each carrying the peer's sequence number), keeping
    /// for each key the highest version, and records `through` as the peer's cursor, all in one
    /// transaction.
    ///
    /// Entries that would break a local limit (sizes, counts, nesting) are not applied and are
    /// announced with reason `quotaViolation`; applied ones are announced with `reason`
    /// (`replica` or `initialSync`).
    ///
    /// - Returns: How many entries changed this replica.
    @discardableResult
    package func applyRemote(
        _ incoming: [SettingEntry], from peer: ReplicaID, through: Int64, reason: ChangeReason
    ) throws(SettingsError) -> Int {
        let applied = try writer.withLock { (writer) throws(SettingsError) -> Int in
            let (accepted, refused) = cache.withLock { $0.merge(incoming, limits: configuration.limits) }
            let now = configuration.clock()
            // A peer's clock far ahead must not drag this one along.
            let ceiling = HybridTimestamp(milliseconds: now + configuration.maximumClockSkew, counter: 0)
            for entry in accepted { writer.clock.observe(min(entry.version.timestamp, ceiling)) }
            let previous = writer.peerCursors[peer] ?? 0
            let cursor = PeerCursor(
                peer: peer, receivedSequence: max(previous, through), contactMilliseconds: now)
            let batch = Commit(
                entries: accepted, reason: reason, origin: peer, cursor: cursor, refused: refused)
            return try commit(batch, writer: &writer).count
        }
        observers.deliverPending()
        return applied
    }
}
