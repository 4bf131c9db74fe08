extension Settings {
    /// The history records `query` selects, newest first (see `HistoryRecord`).
    ///
    /// A key's records are found by walking back from its entry, record by record; a prefix
    /// walks every key under it (deleted ones included) and merges them; without a key the
    /// newest records of all keys are read in order.
    public func history(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        let records = try unnamedHistory(query)
        let names = knownNames()
        guard !names.isEmpty else { return records }
        return records.map { record in
            var named = record
            named.originName = names[record.version.replica]
            return named
        }
    }

    /// `history(_:)` without the origins' names.
    private func unnamedHistory(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        let selection = query.keyOrPrefix.map(KeyIdentity.normalize)
        return try writer.withLock { (writer) throws(SettingsError) -> [HistoryRecord] in
            guard let backend = writer.backend else { throw .closed(path: displayPath) }
            guard let selection else { return try backend.recentHistory(query) }
            // Under the writer lock: no commit can add a record the heads would miss.
            let heads = cache.withLock { cache in
                selection.hasSuffix(".")
                    ? cache.entries.entries { KeyIdentity.hasPrefix($0, selection) }.map(\.sequence)
                    : cache.entries[selection].map { [$0.sequence] } ?? []
            }
            return try backend.history(following: heads, query: query)
        }
    }

    /// The history of `key`, newest first, at most `limit` records.
    public func history(for key: String, limit: Int = 100) throws(SettingsError) -> [HistoryRecord] {
        try history(HistoryQuery(keyOrPrefix: key, limit: limit))
    }

    /// How many history records the database holds.
    package var historyCount: Int {
        gauges.historyCount
    }

    /// Every stored value as it was at `time` (milliseconds since 1970): for each key changed
    /// since, the value its first later change replaced; the others as they are now.
    ///
    /// - Throws: `invalidValue` when the history cannot answer: it is off, `time` is older than
    ///   it keeps, or a `secret` key changed since (its history keeps fingerprints only; the
    ///   error names those keys).
    public func snapshot(at time: UInt64) throws(SettingsError) -> [String: SettingValue] {
        try checkHistoryReaches(time)
        let changes = try firstChanges(after: time, under: nil)
        try refuseSecrets(in: changes, at: time)
        var values = snapshot()
        for (key, record) in changes { values[key] = record.previous }
        return values
    }

    /// Throws unless the history reaches back to `time`: it is on, and keeps records that old.
    private func checkHistoryReaches(_ time: UInt64) throws(SettingsError) {
        let retention = configuration.history
        guard retention.isEnabled else {
            throw SettingsError(
                .invalidValue,
                "the history is off (--history-keep 0): it cannot tell what the store held then")
        }
        let now = configuration.clock()
        guard now <= retention.keepMilliseconds || time >= now - retention.keepMilliseconds else {
            throw SettingsError(
                .invalidValue,
                "that is older than the history keeps (\(retention.keepMilliseconds / 86_400_000) days, --history-keep): it cannot tell what the store held then"
            )
        }
        // A full history has dropped its oldest records by count: before the oldest one kept,
        // some change may be missing.
        let oldest = try writer.withLock { (writer) throws(SettingsError) -> UInt64? in
            guard writer.historyCount >= retention.maximumRecords, let backend = writer.backend else {
                return nil
            }
            return try backend.oldestHistoryTime()
        }
        if let oldest, time < oldest {
            throw SettingsError(
                .invalidValue,
                "that is older than the oldest of the \(retention.maximumRecords) records the history keeps (--history-max), from \(ISO8601.format(secondsSince1970: Double(oldest) / 1000)): it cannot tell what the store held then"
            )
        }
    }

    /// Throws naming the `secret` keys among `changes`: their history holds fingerprints, so the
    /// value they had at `time` cannot be restored.
    private func refuseSecrets(in changes: [String: HistoryRecord], at time: UInt64) throws(SettingsError) {
        let secret = changes.filter { $0.value.isRedacted }.keys.sorted()
        guard let first = secret.first else { return }
        let named =
            secret.prefix(10).map { "'\($0)'" }.joined(separator: ", ") + (secret.count > 10 ? ", …" : "")
        throw SettingsError(
            .invalidValue,
            "cannot restore \(secret.count) secret key(s) changed since then (\(named)): their history keeps fingerprints, not values",
            key: first)
    }

    /// Writes `key`'s value of version `version` back, as a new write (synced like any, recorded
    /// in the history as `revert`); a version that was a deletion deletes the key.
    ///
    /// - Throws: `invalidValue` when the history has no such version of the key (or keeps only
    ///   its fingerprint), and what a write may throw.
    public func revert(_ key: String, to version: SettingVersion) throws(SettingsError) {
        let value = try historicValue(of: key, version: version)
        try typed {
            try transaction(reason: .revert) { transaction in
                try transaction.set(value, forKey: key)
            }
        }
    }

    /// Returns every key under `prefix` (a key, or a prefix ending in `.`) to the value it had at
    /// `time`, in one transaction of new writes (recorded as `revert`).
    ///
    /// A prefix skips its locked keys (as `reset()` does); one locked key is refused.
    ///
    /// - Returns: How many keys changed.
    /// - Throws: `invalidValue` when the history cannot answer (off, not that old, or secret keys
    ///   changed since, named), and nothing is written; what a write may throw.
    @discardableResult
    public func revert(_ prefix: String, before time: UInt64) throws(SettingsError) -> Int {
        let changes = try historicValues(under: prefix, at: time)
        let skipped = try typed {
            try transaction(reason: .revert) { transaction in
                try transaction.restore(changes, under: prefix)
            }
        }
        return changes.count - skipped.count
    }

    /// The value `key` had at version `version` (nil: that version deleted it).
    package func historicValue(of key: String, version: SettingVersion) throws(SettingsError) -> SettingValue?
    {
        let records = try history(HistoryQuery(keyOrPrefix: key, limit: .max))
        guard let record = records.first(where: { $0.version == version }) else {
            throw SettingsError(.invalidValue, "the history of '\(key)' has no version \(version)", key: key)
        }
        guard !record.isRedacted else {
            throw SettingsError(
                .invalidValue, "'\(key)' is secret: its history keeps no values to revert to", key: key)
        }
        return record.value
    }

    /// The values the keys under `prefix` changed since `time` had then (nil: absent then).
    ///
    /// - Throws: `invalidValue` when the history cannot answer (`snapshot(at:)` says when).
    package func historicValues(under prefix: String, at time: UInt64) throws(SettingsError) -> [String:
        SettingValue?]
    {
        try checkHistoryReaches(time)
        let changes = try firstChanges(after: time, under: prefix)
        try refuseSecrets(in: changes, at: time)
        return changes.mapValues(\.previous)
    }

    /// Deletes a batch of records past the retention (older than it keeps, or beyond the most it
    /// keeps), holding the writer lock only for that batch; returns how many went.
    @discardableResult
    package func pruneHistory(batch: Int = 500) throws(SettingsError) -> Int {
        let retention = configuration.history
        let now = configuration.clock()
        return try writer.withLock { (writer) throws(SettingsError) -> Int in
            guard let backend = writer.backend, writer.historyCount > 0 else { return 0 }
            let cutoff =
                retention.isEnabled && now > retention.keepMilliseconds
                ? now - retention.keepMilliseconds : now
            let maximum = retention.isEnabled ? retention.maximumRecords : 0
            let removed = try backend.pruneHistory(
                before: cutoff, excess: max(0, writer.historyCount - maximum), batch: batch)
            writer.historyCount -= removed
            return removed
        }
    }

    /// For each key (under `prefix`, when given) changed after `time`, its first change then.
    private func firstChanges(after time: UInt64, under prefix: String?) throws(SettingsError)
        -> [String: HistoryRecord]
    {
        let records = try history(HistoryQuery(keyOrPrefix: prefix, sinceMilliseconds: time + 1, limit: .max))
        var first: [String: HistoryRecord] = [:]
        // Newest first: the last record seen for a key is its earliest since `time`.
        for record in records { first[record.key] = record }
        return first
    }
}
