import Synchronization

extension Settings: SettingsWriting {
    /// What locks `key`: the `locks.d` file, or the hub's mandatory policy (`hub policy
    /// 'NAME' (revision N)`); nil when it can be written.
    public func lockingFile(forKey key: String) -> String? {
        policy.locker(ofKey: KeyIdentity.normalize(key))
    }

    /// Applies `writes` in one transaction (reason `local`) if every precondition holds.
    ///
    /// - Throws: `versionMismatch` naming every key whose precondition failed (nothing is
    ///   written), and what a write may throw.
    public func write(_ writes: [SettingWrite]) throws(SettingsError) {
        try typed { try transaction { try $0.write(writes) } }
    }

    /// The changes of the keys `filter` selects: first those numbered after `sequence`, from the
    /// history (`changes(since:matching:)`), then each as it is committed, with no gap and none
    /// twice. The stream ends when its task is cancelled or it is released.
    ///
    /// - Throws: `historyCompacted` when the history no longer reaches back to `sequence`.
    public func changes(_ filter: ChangeFilter, since sequence: Int64?) throws(SettingsError)
        -> AsyncThrowingStream<SettingsChange, any Error>
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SettingsChange.self)
        guard let sequence else {
            let token = observe(filter) { continuation.yield($0) }
            continuation.onTermination = { _ in token.cancel() }
            return stream
        }
        let resume = ResumedWatch(continuation)
        // Observe first: a commit between the replay's read and the observation cannot be missed;
        // what the replay holds too is dropped by number.
        let token = observe(filter) { resume.live($0) }
        continuation.onTermination = { _ in token.cancel() }
        let (replayed, through) = try changes(since: sequence, matching: filter)
        resume.replayed(replayed, through: through)
        return stream
    }
}

/// A watch resumed from a sequence number: live changes wait while the replay is delivered,
/// then those the replay held are dropped.
final class ResumedWatch: Sendable {
    private struct State {
        /// Live changes that came before the replay was delivered.
        var waiting: [SettingsChange] = []
        /// The number the replay reached, once it is delivered.
        var through: Int64?
    }

    private let continuation: AsyncThrowingStream<SettingsChange, any Error>.Continuation
    private let state = Mutex(State())

    init(_ continuation: AsyncThrowingStream<SettingsChange, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// A change as it is committed.
    func live(_ change: SettingsChange) {
        state.withLock { state in
            guard let through = state.through else { return state.waiting.append(change) }
            if change.follows(through) { continuation.yield(change) }
        }
    }

    /// The replay, through `through`; then the live changes that came meanwhile and it lacks.
    func replayed(_ changes: [SettingsChange], through: Int64) {
        state.withLock { state in
            for change in changes { continuation.yield(change) }
            for change in state.waiting where change.follows(through) {
                continuation.yield(change)
            }
            state.waiting = []
            state.through = through
        }
    }
}
