import SettingsStore

/// A watch started `since` a sequence number, while its replay is being sent: the changes read
/// from the history wait here and leave as fast as the client reads them (a replay of any
/// length never overflows its connection's buffer), and live changes wait behind them.
struct WatchReplay {
    /// The replayed changes, in order, then the live ones that came meanwhile.
    private var waiting: [SettingsChange]
    /// How many of `waiting` have been sent.
    private var sent = 0
    /// The number the replay reaches: a live change at or below it is already in it.
    let through: Int64

    init(_ replayed: [SettingsChange], through: Int64) {
        waiting = replayed
        self.through = through
    }

    /// Keeps a live change for after the replay, unless the replay holds it.
    mutating func wait(_ change: SettingsChange) {
        if change.follows(through) { waiting.append(change) }
    }

    /// The next change to send; nil once all are sent.
    mutating func next() -> SettingsChange? {
        guard sent < waiting.count else { return nil }
        defer { sent += 1 }
        return waiting[sent]
    }
}
