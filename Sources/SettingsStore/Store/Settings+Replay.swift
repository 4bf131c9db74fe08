extension Settings {
    /// The most changes one replayed `SettingsChange` lists.
    static let replayedChangesPerEvent = 1_000

    /// The changes numbered after `sequence` that `filter` selects, oldest first, read from the
    /// history: what a watcher that saw everything through `sequence` missed. Consecutive changes
    /// of one reason and origin come as one `SettingsChange` (at most 1,000 keys), whose
    /// `sequence` is its last change's number.
    ///
    /// Resume a watch with it: observe first, then replay, then deliver the observed changes
    /// numbered after `through` (and those that store nothing, `SettingsChange.isNumbered`).
    ///
    /// A key a schema marks `secret` is replayed only as it is now (its history keeps
    /// fingerprints): its earlier changes after `sequence` are left out, its last one is
    /// delivered with its value. Changes that store nothing (`system`, refusals) are not
    /// numbered and not replayed.
    ///
    /// - Returns: The changes and the sequence number they reach: the store's when it read them.
    /// - Throws: `historyCompacted` when the history no longer holds every change after
    ///   `sequence` (its retention pruned some, or it is off); the error's
    ///   `oldestReplayableSequence` says from where a replay can start. `invalidValue` when
    ///   `sequence` is past the store's own number (it names another store's changes).
    public func changes(since sequence: Int64, matching filter: ChangeFilter = .all) throws(SettingsError)
        -> (changes: [SettingsChange], through: Int64)
    {
        let (records, through) = try writer.withLock {
            (writer) throws(SettingsError) -> ([HistoryRecord], Int64) in
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            let last = writer.lastSequence
            guard sequence <= last else {
                throw SettingsError(
                    .invalidValue,
                    "sequence \(sequence) is past this store's last change (\(last)): it numbers another store's changes"
                )
            }
            guard sequence < last else { return ([], last) }
            let records = try backend.historyRecords(after: sequence, limit: Int(clamping: last - sequence))
            // Every number from `sequence + 1` to `last` took one record when it was written.
            guard records.count == last - sequence, records.first?.sequence == sequence + 1 else {
                throw historyCompacted(since: sequence, last: last, records: records)
            }
            return (records, last)
        }
        return (replayed(records, matching: filter), through)
    }

    /// `historyCompacted`, naming the oldest number from which the history holds every change.
    private func historyCompacted(since sequence: Int64, last: Int64, records: [HistoryRecord])
        -> SettingsError
    {
        // The records end at `last` unless the history is off; walk back while they follow on.
        var oldest = last
        for record in records.reversed() {
            guard record.sequence == oldest else { break }
            oldest -= 1
        }
        let why =
            configuration.history.isEnabled
            ? "the history no longer holds every change after \(sequence) (--history-keep, --history-max)"
            : "the history is off (--history-keep 0): no change is kept to replay"
        var error = SettingsError(
            .historyCompacted, "\(why); changes can be replayed after \(oldest) at the earliest")
        error.oldestReplayableSequence = oldest
        return error
    }

    /// `records` as changes: grouped by reason and origin, secret keys as they are now, deletions
    /// of keys that held nothing left out (as their commit announced nothing).
    private func replayed(_ records: [HistoryRecord], matching filter: ChangeFilter) -> [SettingsChange] {
        var changes: [SettingsChange] = []
        var group: [SettingsChange.KeyChange] = []
        var groupHead: (reason: ChangeReason, origin: ReplicaID, sequence: Int64)?
        func flush() {
            if let head = groupHead, !group.isEmpty {
                changes.append(
                    SettingsChange(
                        reason: head.reason, origin: head.origin, changes: group, sequence: head.sequence))
            }
            group.removeAll(keepingCapacity: true)
        }
        for record in records where filter.matches(record.key) {
            guard record.value != nil || record.previous != nil else { continue }
            let value: SettingValue?
            if record.isRedacted {
                // Only the key's last change is known in the clear: the entry it wrote.
                guard let entry = entry(forKey: record.key), entry.sequence == record.sequence else {
                    continue
                }
                value = entry.value
            } else {
                value = record.value
            }
            let reason = ChangeReason(rawValue: record.reason) ?? .local
            if let head = groupHead,
                head.reason != reason || head.origin != record.origin
                    || group.count >= Self.replayedChangesPerEvent
            {
                flush()
            }
            group.append(SettingsChange.KeyChange(key: record.key, value: value, version: record.version))
            groupHead = (reason, record.origin, record.sequence)
        }
        flush()
        return changes
    }
}
