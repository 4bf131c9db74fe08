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

    /// `transaction(_:)` with the reason its change is announced with.
    func transaction<Result>(reason: ChangeReason, _ body: (SettingsTransaction) throws -> Result) throws
        -> Result
    {
        let result = try writer.withLock { writer throws -> Result in
            let transaction = SettingsTransaction(settings: self)
            let result = try body(transaction)
            let writes = try cache.withLock {
                try $0.stage(transaction.latestWrites(), limits: configuration.limits)
            }
            guard !writes.isEmpty else { return result }
            let records = try writer.commit(writes, replica: replicaID, path: displayPath)
            cache.withLock { cache in cache.apply(records) }
            let changes = records.map {
                SettingsChange.KeyChange(key: $0.key, value: $0.value, version: $0.version)
            }
            observers.enqueue(SettingsChange(reason: reason, origin: replicaID, changes: changes))
            return result
        }
        observers.deliverPending()
        return result
    }

    /// Runs a store operation whose only possible failure is a `SettingsError`, keeping that type.
    func typed<Result>(_ body: () throws -> Result) throws(SettingsError) -> Result {
        do {
            return try body()
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.sqlite, "unexpected failure on '\(displayPath)': \(error)", path: path)
        }
    }
}

extension ReplicaCache {
    /// The writes that change something (removing an unset key, or writing the value a key
    /// already holds, does not); throws `limitExceeded` if applying them would break one of
    /// `limits` or nest a value deeper than `SettingValue.maximumNestingDepth`.
    func stage(_ writes: [(key: String, value: SettingValue?)], limits: SettingsLimits) throws(SettingsError)
        -> [StagedWrite]
    {
        var staged: [StagedWrite] = []
        staged.reserveCapacity(writes.count)
        var count = liveCount
        var bytes = totalBytes
        for (key, value) in writes {
            let existing = entries[key]
            if let old = existing?.value {
                // Writing what a key already holds changes nothing: no version, no event, no sync.
                if let value, value.isIdentical(to: old) { continue }
                count -= 1
                bytes -= Self.footprint(key: key, value: old)
            } else if value == nil {
                continue
            }
            staged.append(StagedWrite(key: key, value: value))
            guard let value else { continue }
            try value.checkNesting(key: key)
            let size = value.storageSize
            if size > limits.maximumValueBytes {
                throw SettingsError(
                    .limitExceeded,
                    "value for '\(key)' is \(size) bytes, over the limit of \(limits.maximumValueBytes) (maximumValueBytes)",
                    key: key)
            }
            count += 1
            bytes += key.utf8.count + size
        }
        if let maximum = limits.maximumKeyCount, count > maximum, count > liveCount {
            let key = writes.last { $0.value != nil }?.key ?? ""
            throw SettingsError(
                .limitExceeded,
                "writing '\(key)' would make \(count) keys, over the limit of \(maximum) (maximumKeyCount)",
                key: key)
        }
        if let maximum = limits.maximumTotalBytes, bytes > maximum, bytes > totalBytes {
            let key = writes.last { $0.value != nil }?.key ?? ""
            throw SettingsError(
                .limitExceeded,
                "writing '\(key)' would make \(bytes) bytes in all, over the limit of \(maximum) (maximumTotalBytes)",
                key: key)
        }
        return staged
    }
}
