extension Settings {
    /// Runs `body` and commits all its writes at once, announced to observers as one change.
    ///
    /// The transaction is atomic with respect to every other write to this store: nothing else
    /// commits between its reads and its commit. If `body` throws, nothing is written.
    ///
    /// ```swift
    /// try settings.transaction { transaction in
    ///     try transaction.set(1280, forKey: "window.width")
    ///     try transaction.set(720, forKey: "window.height")
    /// }
    /// ```
    ///
    /// - Throws: what `body` throws, or a `SettingsError` when a limit or the disk refuses the commit.
    @discardableResult
    public func transaction<Result>(_ body: (SettingsTransaction) throws -> Result) throws -> Result {
        try transaction(reason: .local, body)
    }

    /// `transaction(_:)` with the reason its change is announced with and recorded as, and, for
    /// writes made before now, the latest time they can have been made (`SettingsWriter.stamp`).
    package func transaction<Result>(
        reason: ChangeReason, madeBy: HybridTimestamp? = nil, _ body: (SettingsTransaction) throws -> Result
    ) throws -> Result {
        lastLocalWriteRequest.store(configuration.monotonicClock().uptimeNanoseconds, ordering: .relaxed)
        let result = try writer.withLock { writer throws -> Result in
            let transaction = SettingsTransaction(settings: self)
            let result = try body(transaction)
            let writes = try cache.withLock {
                try $0.stage(transaction.latestWrites(), limits: configuration.limits)
            }
            guard !writes.isEmpty else { return result }
            let entries = writer.stamp(writes, replica: replicaID, madeBy: madeBy)
            _ = try commit(
                Commit(
                    entries: entries, reason: reason, origin: replicaID,
                    actors: configuration.history.isEnabled ? writes.map(\.actor) : []),
                writer: &writer)
            return result
        }
        observers.deliverPending()
        return result
    }

    /// Whether a local transaction asked for the writer less than `milliseconds` ago, on the
    /// monotonic clock.
    package func hasLocalWrites(withinMilliseconds milliseconds: UInt64) -> Bool {
        let last = lastLocalWriteRequest.load(ordering: .relaxed)
        return last > 0
            && configuration.monotonicClock() < Deadline(uptimeNanoseconds: last)
                + .milliseconds(Int64(clamping: milliseconds))
    }

    /// Runs a store operation whose only possible failure is a `SettingsError`, keeping that type.
    package func typed<Result>(_ body: () throws -> Result) throws(SettingsError) -> Result {
        do {
            return try body()
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.sqlite, "unexpected failure on '\(displayPath)': \(error)", path: path)
        }
    }
}
