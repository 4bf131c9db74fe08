extension Settings {
    /// The hub namespace this store syncs as, if it ever joined one.
    var account: SyncAccount? {
        writer.withLock { $0.account }
    }

    /// Records `namespace` as the store's account when it joins its first one: its synced keys
    /// merge into the namespace, as before it had an account.
    func joinAccount(_ namespace: String) throws(SettingsError) {
        try writer.withLock { (writer) throws(SettingsError) in
            guard writer.account == nil else { return }
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            let account = SyncAccount(namespace: namespace, since: .zero)
            try backend.recordAccount(account, forgetting: [])
            writer.account = account
        }
    }

    /// Moves the store to the hub namespace `namespace`, which holds `entries` (every row of
    /// it, through its hub sequence number `through`): the synced keys are replaced by the
    /// namespace's, whatever their versions, and those it lacks are deleted without a trace
    /// (no tombstone that could travel into the new namespace); keys of scope `local` stay.
    /// Observers hear the keys whose values changed with reason `accountChange`, and the
    /// history records each change. From now on, entries a socket peer sends that are stamped
    /// before the change belong to the old account and are refused.
    ///
    /// A crash part-way leaves the old account recorded: the next connection changes again.
    ///
    /// - Returns: The local sequence numbers the change took (never pushed back to the hub), and
    ///   how many keys changed.
    func changeAccount(
        to namespace: String, entries: [SettingEntry], from hub: ReplicaID, through: Int64
    ) throws(SettingsError) -> (sequences: ClosedRange<Int64>?, changed: Int) {
        let outcome = try writer.withLock {
            (writer) throws(SettingsError) -> (sequences: ClosedRange<Int64>?, changed: Int) in
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            let localID = identity.withLock { $0 }
            let (merge, leftovers, unchanged) = cache.withLock { cache in
                let merge = cache.merge(
                    entries, limits: configuration.limits, horizon: .zero, replacing: true)
                let kept = Set(
                    entries.filter { entry in
                        cache.entries[entry.key].map {
                            $0.version == entry.version && SettingValue.identical($0.value, entry.value)
                        } ?? false
                    }.map(\.key))
                let taken = Set(merge.accepted.map(\.key))
                let leftovers = cache.entries.entries(whereKey: {
                    cache.isShared($0) && !taken.contains($0) && !kept.contains($0)
                })
                // A new version of the same value changes nothing an observer sees.
                let unchanged = merge.accepted.filter { entry in
                    cache.entries[entry.key].map { SettingValue.identical($0.value, entry.value) } ?? false
                }.map(\.key)
                return (merge, leftovers, unchanged)
            }
            let deletions = writer.stamp(
                leftovers.filter { $0.value != nil }.map {
                    StagedWrite(key: $0.key, value: nil, replaces: $0.version.timestamp)
                }, replica: localID)
            let since = writer.clock.tick()
            let cursor = PeerCursor(
                peer: hub, record: PeerRecord(receivedSequence: through, incarnation: nil),
                contactMilliseconds: configuration.clock())
            let batch = Commit(
                entries: merge.accepted + deletions, reason: .accountChange, origin: hub, cursor: cursor,
                unannounced: Set(unchanged + merge.locked))
            let records = try commit(batch, writer: &writer)
            // The deletions were recorded in the history; now no trace of the keys is left.
            let forgotten = leftovers.map(\.key)
            let account = SyncAccount(namespace: namespace, since: since)
            try backend.recordAccount(account, forgetting: forgotten)
            writer.account = account
            cache.withLock { cache in cache.remove(forgotten.compactMap { cache.entries[$0] }) }
            let sequences = records.first.flatMap { first in records.last.map { first.sequence...$0.sequence }
            }
            return (sequences, records.count - unchanged.count - merge.locked.count)
        }
        observers.deliverPending()
        return outcome
    }
}
