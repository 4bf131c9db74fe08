extension Settings {
    /// Deletes the tombstones older than `SettingsConfiguration.tombstoneLifetime`, from memory
    /// and disk, and raises the tombstone horizon past the newest of them: an entry arriving
    /// for a key this replica does not hold, stamped below the horizon, may be one deleted that
    /// long ago and is answered with a fresh deletion instead of being taken back (a replica that
    /// was away longer than the lifetime cannot bring deleted keys back). A store that never
    /// collected a tombstone takes everything. Runs when a store opens; a daemon also runs it
    /// every few hours.
    ///
    /// - Returns: How many tombstones were collected.
    @discardableResult
    package func collectTombstones() throws(SettingsError) -> Int {
        let lifetime = configuration.tombstoneLifetimeMilliseconds
        let now = configuration.clock()
        guard lifetime > 0, now > lifetime else { return 0 }
        let cutoff = HybridTimestamp(milliseconds: now - lifetime, counter: 0)
        return try writer.withLock { (writer) throws(SettingsError) -> Int in
            let expired = cache.withLock { $0.tombstones(below: cutoff) }
            guard let newest = expired.map(\.version.timestamp).max() else { return 0 }
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            let horizon = max(writer.tombstoneHorizon, newest.successor)
            try backend.collectTombstones(below: cutoff, horizon: horizon)
            writer.tombstoneHorizon = horizon
            cache.withLock { $0.remove(expired) }
            return expired.count
        }
    }

    /// The stamp below which tombstones have been collected.
    package var tombstoneHorizon: HybridTimestamp {
        writer.withLock { $0.tombstoneHorizon }
    }
}

extension Settings {
    /// Re-stamps this replica's own entries that a peer has not received (local sequence above
    /// `cursor`) and that are older than the peer's tombstone horizon, which the peer would
    /// otherwise take for keys deleted long ago: a replica back from a long absence keeps the
    /// changes it made while away. Values are unchanged and nothing is announced.
    ///
    /// - Returns: How many entries were re-stamped.
    @discardableResult
    package func renewOwnEntries(after cursor: Int64, olderThan horizon: HybridTimestamp)
        throws(SettingsError) -> Int
    {
        guard horizon > .zero else { return 0 }
        let renewed = try writer.withLock { (writer) throws(SettingsError) -> Int in
            let localID = identity.withLock { $0 }
            let stale = cache.withLock { cache in
                cache.entries(after: cursor, limit: .max).filter {
                    $0.version.replica == localID && $0.version.timestamp < horizon
                }
            }
            guard !stale.isEmpty else { return 0 }
            let writes = stale.map {
                StagedWrite(key: $0.key, value: $0.value, replaces: $0.version.timestamp)
            }
            let entries = writer.stamp(writes, replica: localID)
            let batch = Commit(
                entries: entries, reason: .local, origin: localID, unannounced: Set(entries.map(\.key)))
            return try commit(batch, writer: &writer).count
        }
        observers.deliverPending()
        return renewed
    }
}
