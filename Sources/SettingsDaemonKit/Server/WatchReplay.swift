import SettingsStore

/// A watch started `since` a sequence number, while its replay is being sent: the changes read
/// from the history wait here and leave as fast as the client reads them (a replay of any
/// length never overflows its connection's buffer), and live changes wait behind them.
struct WatchReplay {
    /// The replayed changes, in order, and how many have been sent.
    private var replayed: [SettingsChange]
    private var sent = 0
    /// The live changes that came while the replay was being sent, in order.
    private var live: [SettingsChange] = []
    /// The number the replay reaches: a live change at or below it is already in it.
    let through: Int64

    init(_ replayed: [SettingsChange], through: Int64) {
        self.replayed = replayed
        self.through = through
    }

    /// Whether a live change goes out, on a watch whose replay reached `through`: every change
    /// after it, and the changes that store nothing (`SettingsChange.isNumbered`).
    static func isNew(_ change: SettingsChange, after through: Int64) -> Bool {
        !change.isNumbered || change.sequence > through
    }

    /// Keeps a live change for when the replay is sent, unless the replay holds it.
    mutating func wait(_ change: SettingsChange) {
        if Self.isNew(change, after: through) { live.append(change) }
    }

    /// The next change to send: the replay's, then the live ones; nil once all are sent.
    mutating func next() -> SettingsChange? {
        if sent < replayed.count {
            defer {
                sent += 1
                // What was sent need not be kept.
                if sent == replayed.count { replayed = [] }
            }
            return replayed[sent]
        }
        sent = 0
        guard !live.isEmpty else { return nil }
        return live.removeFirst()
    }
}
