extension Settings {
    /// Calls `handler` after every commit that changes a key `filter` selects, with only those keys.
    ///
    /// Handlers run after the commit, outside the store's locks, in commit order, one at a time,
    /// on the thread that made the write (or on one committing at the same moment). Keep them
    /// short; hop to your own actor or queue for real work.
    ///
    /// - Returns: A token; the observation lasts until it is cancelled or released.
    public func observe(
        _ filter: ChangeFilter, handler: @escaping @Sendable (SettingsChange) -> Void
    ) -> SubscriptionToken {
        observers.add(filter, handler: handler)
    }

    /// Calls `handler` after every commit that changes one of `keys`.
    public func observe(
        keys: some Sequence<String>, handler: @escaping @Sendable (SettingsChange) -> Void
    ) -> SubscriptionToken {
        observers.add(.keys(Set(keys)), handler: handler)
    }

    /// Calls `handler` after every commit that changes `key`.
    public func observe<Value>(
        _ key: SettingKey<Value>, handler: @escaping @Sendable (SettingsChange) -> Void
    ) -> SubscriptionToken {
        observers.add(.keys([key.name]), handler: handler)
    }

    /// The changes of the keys `filter` selects, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await change in settings.changes(.prefixes(["audio."])) {
    ///     print(change.keys, change.reason)
    /// }
    /// ```
    ///
    /// The subscription starts when this is called and ends when the sequence's task is
    /// cancelled or the sequence is released. Changes are buffered until consumed.
    public func changes(_ filter: ChangeFilter = .all) -> AsyncStream<SettingsChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: SettingsChange.self)
        let token = observers.add(filter) { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// The number of live observers, for diagnostics and tests.
    package var observerCount: Int { observers.count }
}
