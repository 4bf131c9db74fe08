/// When a hub link compares digests: once the link has been quiet for `quietMilliseconds` after
/// a change on either side (a burst of changes costs one comparison, not one each; a link that
/// polls through a pooler skips these, so a change on a fleet of thousands does not cost a
/// comparison on every machine), at least every `safetyNet` (a hand edit changes no counter), at
/// once when forced (`sync --wait`, a rewind), never sooner than ten times the last routine
/// comparison took after it, and backing off while a divergence persists (a row this replica
/// refuses stays different).
struct CheckSchedule {
    /// This replica's side of the comparison.
    var entropy = HubAntiEntropy()
    /// Set to compare at the next quiet round whatever else says.
    var isForced = true
    /// The `verify()` requests taken into account so far.
    var verifyRequestsSeen = 0
    /// How long nothing must change before a routine comparison.
    static let quietMilliseconds: UInt64 = 300
    /// The longest between comparisons, in milliseconds.
    let safetyNet: UInt64
    /// Whether a change on either side makes a comparison due.
    let comparesAfterChanges: Bool
    private var last: (sequence: Int64, counter: Int64, at: UInt64)?
    private var observed: (sequence: Int64, counter: Int64)?
    private var changedAt: UInt64 = 0
    private var notBefore: UInt64 = 0
    private var backoff: UInt64 = 0

    /// A schedule that compares at least every `safetyNet` seconds, and after changes when
    /// `comparesAfterChanges`.
    init(safetyNet: Double, comparesAfterChanges: Bool) {
        self.safetyNet = UInt64(safetyNet * 1000)
        self.comparesAfterChanges = comparesAfterChanges
    }

    /// Whether to compare now, with the store at `sequence` and the hub's counter at `counter`.
    mutating func isDue(sequence: Int64, counter: Int64, now: UInt64 = SettingsConfiguration.systemClock())
        -> Bool
    {
        secondsUntilDue(sequence: sequence, counter: counter, now: now) == 0
    }

    /// How long until a comparison is due (nil: none is pending), so the link wakes for it.
    mutating func secondsUntilDue(
        sequence: Int64, counter: Int64, now: UInt64 = SettingsConfiguration.systemClock()
    ) -> Double? {
        if observed.map({ $0.sequence != sequence || $0.counter != counter }) ?? true {
            observed = (sequence, counter)
            changedAt = now
        }
        guard isPending(sequence: sequence, counter: counter, now: now) else { return nil }
        let quietUntil = isForced ? 0 : changedAt + Self.quietMilliseconds
        let due = max(notBefore, quietUntil)
        return now >= due ? 0 : Double(due - now) / 1000
    }

    private func isPending(sequence: Int64, counter: Int64, now: UInt64) -> Bool {
        guard let last, !isForced else { return true }
        return (comparesAfterChanges && (last.sequence != sequence || last.counter != counter))
            || now &- last.at >= safetyNet
    }

    /// The hub is known to hold what it held at the last comparison, which agreed
    /// (`HubQuietCheck.vouchesForAgreement`): when nothing else makes one due (none was asked
    /// for, no divergence is being confirmed, this replica is at the `sequence` it compared at),
    /// the safety net starts again from `now` without one, and this returns true.
    mutating func renewWithoutComparing(
        sequence: Int64, now: UInt64 = SettingsConfiguration.systemClock()
    ) -> Bool {
        guard !isForced, backoff == 0, let last, last.sequence == sequence else { return false }
        self.last = (sequence, last.counter, now)
        return true
    }

    /// Records a comparison that took `took` milliseconds.
    mutating func checked(
        sequence: Int64, counter: Int64, took: UInt64, agreed: Bool,
        now: UInt64 = SettingsConfiguration.systemClock()
    ) {
        // After a repair, the verdict is confirmed by another comparison whatever the link's
        // routine (a polling link compares only at its safety net otherwise).
        isForced = !agreed
        last = (sequence, counter, now)
        backoff = agreed ? 0 : min(max(backoff * 2, 500), 60_000)
        // After a repair, confirm soon (the backoff bounds the cost if the difference persists).
        notBefore = now + (agreed ? 10 * took : backoff)
    }
}
