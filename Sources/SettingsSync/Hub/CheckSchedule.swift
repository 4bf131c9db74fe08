import SettingsStore
import SettingsWire

/// When a hub link compares digests: once the link has been quiet for `quiet` after
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
    static let quiet = Duration.milliseconds(300)
    /// The longest between comparisons.
    let safetyNet: Duration
    /// Whether a change on either side makes a comparison due.
    let comparesAfterChanges: Bool
    private var last: (sequence: Int64, counter: Int64, at: Deadline)?
    private var observed: (sequence: Int64, counter: Int64)?
    private var changedAt = Deadline(uptimeNanoseconds: 0)
    private var notBefore = Deadline(uptimeNanoseconds: 0)
    private var backoff = Duration.zero

    /// A schedule that compares at least every `safetyNet`, and after changes when
    /// `comparesAfterChanges`.
    package init(safetyNet: Duration, comparesAfterChanges: Bool) {
        self.safetyNet = safetyNet
        self.comparesAfterChanges = comparesAfterChanges
    }

    /// Whether to compare now, with the store at `sequence` and the hub's counter at `counter`.
    mutating func isDue(sequence: Int64, counter: Int64, now: Deadline = .now) -> Bool {
        timeUntilDue(sequence: sequence, counter: counter, now: now) == .zero
    }

    /// How long until a comparison is due (nil: none is pending), so the link wakes for it.
    mutating func timeUntilDue(sequence: Int64, counter: Int64, now: Deadline = .now) -> Duration? {
        if observed.map({ $0.sequence != sequence || $0.counter != counter }) ?? true {
            observed = (sequence, counter)
            changedAt = now
        }
        guard isPending(sequence: sequence, counter: counter, now: now) else { return nil }
        let quietUntil = isForced ? Deadline(uptimeNanoseconds: 0) : changedAt + Self.quiet
        return max(notBefore, quietUntil) - now
    }

    private func isPending(sequence: Int64, counter: Int64, now: Deadline) -> Bool {
        guard let last, !isForced else { return true }
        return (comparesAfterChanges && (last.sequence != sequence || last.counter != counter))
            || now - last.at >= safetyNet
    }

    /// The hub is known to hold what it held at the last comparison, which agreed
    /// (`HubPollPlan.Mark`): when nothing else makes one due (none was asked
    /// for, no divergence is being confirmed, this replica is at the `sequence` it compared at),
    /// the safety net starts again from `now` without one, and this returns true.
    mutating func renewWithoutComparing(sequence: Int64, now: Deadline = .now) -> Bool {
        guard !isForced, backoff == .zero, let last, last.sequence == sequence else { return false }
        self.last = (sequence, last.counter, now)
        return true
    }

    /// Records a comparison that took `took`.
    mutating func checked(sequence: Int64, counter: Int64, took: Duration, agreed: Bool, now: Deadline = .now)
    {
        // After a repair, the verdict is confirmed by another comparison whatever the link's
        // routine (a polling link compares only at its safety net otherwise).
        isForced = !agreed
        last = (sequence, counter, now)
        backoff = agreed ? .zero : min(max(backoff * 2, .milliseconds(500)), .seconds(60))
        // After a repair, confirm soon (the backoff bounds the cost if the difference persists).
        let wait: Duration = agreed ? took * 10 : backoff
        notBefore = now + wait
    }
}
