/// When a hub link compares digests: once the link is quiet after a change on either side, at
/// least every `HubConnector.safetyNetInterval` (a hand edit changes no counter), never more
/// often than ten times the last comparison took, and backing off while a divergence persists
/// (a row this replica refuses stays different).
struct CheckSchedule {
    /// This replica's side of the comparison.
    var entropy = HubAntiEntropy()
    /// Set to compare at the next quiet round whatever else says.
    var isForced = true
    /// The `verify()` requests taken into account so far.
    var verifyRequestsSeen = 0
    private var last: (sequence: Int64, counter: Int64, at: UInt64)?
    private var notBefore: UInt64 = 0
    private var backoff: UInt64 = 0

    /// Whether to compare now, with the store at `sequence` and the hub's counter at `counter`.
    func isDue(sequence: Int64, counter: Int64, now: UInt64 = SettingsConfiguration.systemClock()) -> Bool {
        now >= notBefore && isPending(sequence: sequence, counter: counter, now: now)
    }

    /// How long until a comparison that waits only for its time is due (nil: none waits), so
    /// the link wakes for it.
    func secondsUntilDue(sequence: Int64, counter: Int64, now: UInt64 = SettingsConfiguration.systemClock())
        -> Double?
    {
        guard isPending(sequence: sequence, counter: counter, now: now) else { return nil }
        return now >= notBefore ? 0 : Double(notBefore - now) / 1000
    }

    private func isPending(sequence: Int64, counter: Int64, now: UInt64) -> Bool {
        guard let last, !isForced else { return true }
        return last.sequence != sequence || last.counter != counter
            || now &- last.at >= UInt64(HubConnector.safetyNetInterval * 1000)
    }

    /// Records a comparison that took `took` milliseconds.
    mutating func checked(
        sequence: Int64, counter: Int64, took: UInt64, agreed: Bool,
        now: UInt64 = SettingsConfiguration.systemClock()
    ) {
        isForced = false
        last = (sequence, counter, now)
        backoff = agreed ? 0 : min(max(backoff * 2, 500), 60_000)
        notBefore = now + max(10 * took, agreed ? 0 : backoff)
    }
}
