import SettingsStore

/// The watches of one client connection: each one's observation of the store, the replays still
/// being sent, and how far each replay went (its live changes at or below that were in it).
///
/// Used on the loop thread only, by its `ServerConnection`.
struct ConnectionWatches {
    private var tokens: [Int64: SubscriptionToken] = [:]
    /// The number the next watch takes.
    private(set) var nextNumber: Int64 = 1
    /// Watches started `since` a number whose replay is still being sent.
    private var replays: [Int64: WatchReplay] = [:]
    /// For each watch whose replay was sent, the number it reached.
    private var replayedThrough: [Int64: Int64] = [:]

    /// How many watches the connection holds.
    var count: Int { tokens.count }
    /// Whether it holds none.
    var isEmpty: Bool { tokens.isEmpty }
    /// Whether a replay is still being sent.
    var isReplaying: Bool { !replays.isEmpty }

    /// Adds watch `nextNumber`, observed through `token`, with the replay it sends first, if any.
    mutating func add(_ token: SubscriptionToken, replaying replay: WatchReplay?) {
        tokens[nextNumber] = token
        replays[nextNumber] = replay
        nextNumber += 1
    }

    /// Ends watch `number`; false when the connection holds none of that number.
    mutating func remove(_ number: Int64) -> Bool {
        guard let token = tokens.removeValue(forKey: number) else { return false }
        token.cancel()
        replays[number] = nil
        replayedThrough[number] = nil
        return true
    }

    /// Ends every watch; returns how many there were.
    mutating func removeAll() -> Int {
        let count = tokens.count
        for token in tokens.values { token.cancel() }
        tokens = [:]
        replays = [:]
        replayedThrough = [:]
        return count
    }

    /// What becomes of a live change of watch `number`: returned when it goes out now; kept
    /// behind the watch's replay while that is being sent; dropped when the replay held it.
    mutating func live(_ change: SettingsChange, of number: Int64) -> SettingsChange? {
        guard tokens[number] != nil else { return nil }
        if replays[number] != nil {
            replays[number]?.wait(change)
            return nil
        }
        if let through = replayedThrough[number], !change.follows(through) { return nil }
        return change
    }

    /// The next change a replay sends (the lowest-numbered watch's first), nil once every replay
    /// has been sent.
    mutating func nextReplayed() -> (watch: Int64, change: SettingsChange)? {
        while let number = replays.keys.min() {
            if let change = replays[number]?.next() { return (number, change) }
            replayedThrough[number] = replays.removeValue(forKey: number)?.through
        }
        return nil
    }
}
