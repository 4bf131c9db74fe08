extension Settings {
    /// The replicas this one syncs or has synced with during this run, with their progress.
    public var peers: [PeerStatus] {
        peerRegistry.all
    }

    /// The current entries (tombstones included) with a local sequence number above `sequence`,
    /// in sequence order, at most `limit`: what a peer that has seen `sequence` still lacks.
    public func entries(after sequence: Int64, limit: Int = .max) -> [SettingEntry] {
        cache.withLock { $0.entries(after: sequence, limit: limit) }
    }

    /// An order-independent fingerprint of every entry and its version; replicas that have
    /// converged have equal digests.
    public var digest: String {
        cache.withLock { $0.digest }
    }

    /// The last of `peer`'s sequence numbers applied here, or nil if it never synced with this replica.
    public func receivedSequence(from peer: ReplicaID) -> Int64? {
        writer.withLock { $0.peerCursors[peer] }
    }

    /// Applies entries received from `peer` (each carrying the peer's sequence number), keeping
    /// for each key the highest version, and records `through` as the peer's cursor, all in one
    /// transaction.
    ///
    /// Entries that would break a local limit (sizes, counts, nesting) are not applied and are announced with reason
    /// `quotaViolation`; applied ones are announced with `reason` (`replica` or `initialSync`).
    ///
    /// - Returns: How many entries changed this replica.
    @discardableResult
    public func applyRemote(
        _ incoming: [SettingEntry], from peer: ReplicaID, through: Int64, reason: ChangeReason
    )
        throws(SettingsError) -> Int
    {
        let applied = try writer.withLock { (writer) throws(SettingsError) -> Int in
            let (accepted, refused) = cache.withLock { $0.merge(incoming, limits: configuration.limits) }
            let now = configuration.clock()
            let ceiling = HybridTimestamp(milliseconds: now + configuration.maximumClockSkew, counter: 0)
            var sequence = writer.lastSequence
            let records = accepted.map { entry in
                sequence += 1
                writer.clock.observe(min(entry.version.timestamp, ceiling))
                return SettingEntry(
                    key: entry.key, value: entry.value, version: entry.version, sequence: sequence)
            }
            let previous = writer.peerCursors[peer] ?? 0
            let cursor = PeerCursor(
                peer: peer, receivedSequence: max(previous, through), contactMilliseconds: now)
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            try backend.write(records, cursor: cursor)
            writer.lastSequence = sequence
            writer.peerCursors[peer] = cursor.receivedSequence
            cache.withLock { $0.apply(records) }
            if !records.isEmpty {
                let changes = records.map {
                    SettingsChange.KeyChange(key: $0.key, value: $0.value, version: $0.version)
                }
                observers.enqueue(SettingsChange(reason: reason, origin: peer, changes: changes))
            }
            if !refused.isEmpty {
                observers.enqueue(SettingsChange(reason: .quotaViolation, origin: peer, changes: refused))
            }
            return records.count
        }
        observers.deliverPending()
        return applied
    }
}

extension ReplicaCache {
    /// Splits incoming entries into those that win over the local state and fit the limits, and
    /// the refused ones (described by the key's unchanged local state).
    func merge(_ incoming: [SettingEntry], limits: SettingsLimits)
        -> (accepted: [SettingEntry], refused: [SettingsChange.KeyChange])
    {
        var winners: [String: SettingEntry] = [:]
        var order: [String] = []
        for received in incoming {
            // A replica of another build may send a key in another normal form: it is the same key.
            let entry =
                KeyIdentity.isNormalized(received.key)
                ? received
                : SettingEntry(
                    key: KeyIdentity.normalize(received.key), value: received.value,
                    version: received.version,
                    sequence: received.sequence)
            let current = winners[entry.key] ?? entries[entry.key]
            guard current.map({ entry.version > $0.version }) ?? true else { continue }
            if winners.updateValue(entry, forKey: entry.key) == nil { order.append(entry.key) }
        }
        var accepted: [SettingEntry] = []
        var refused: [SettingsChange.KeyChange] = []
        var count = liveCount
        var bytes = totalBytes
        for key in order {
            guard let entry = winners[key] else { continue }
            let old = entries[key]?.value
            let newCount = count - (old == nil ? 0 : 1) + (entry.value == nil ? 0 : 1)
            let newBytes =
                bytes - (old.map { Self.footprint(key: key, value: $0) } ?? 0)
                + (entry.value.map { Self.footprint(key: key, value: $0) } ?? 0)
            let fits =
                KeyValidation.isValid(key, maximumBytes: limits.maximumKeyBytes)
                && (entry.value?.storageSize ?? 0) <= limits.maximumValueBytes
                && (entry.value?.nestingDepth ?? 0) <= SettingValue.maximumNestingDepth
                && (newCount <= (limits.maximumKeyCount ?? .max) || newCount <= count)
                && (newBytes <= (limits.maximumTotalBytes ?? .max) || newBytes <= bytes)
            if entry.value == nil || fits {
                accepted.append(entry)
                count = newCount
                bytes = newBytes
            } else {
                let local = entries[key]
                refused.append(
                    SettingsChange.KeyChange(
                        key: key, value: local?.value, version: local?.version ?? entry.version))
            }
        }
        return (accepted, refused)
    }
}
