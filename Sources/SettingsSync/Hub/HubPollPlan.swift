import SettingsStore
import SettingsWire

/// What a polling link reads of its namespace now and then (`settingsd.poll_plan`): how many
/// machines share the namespace and how many polls a second the hub allows them together, from
/// which `PollSchedule` derives the interval; and the mark that says whether the hub changed
/// since a comparison agreed.
package struct HubPollPlan: Equatable, Sendable {
    /// What the hub's entries looked like when the plan was read: its counter, which every push
    /// moves, and its count of edits by hand (`settingsd.edited`), which every other change to
    /// the entries or counters moves. While both stand, the hub holds what it held.
    package struct Mark: Equatable, Sendable {
        /// The namespace's counter.
        package var counter: Int64
        /// The hub's edits by hand so far (nil: the hub's count is unreadable, so no mark
        /// matches another).
        package var edits: Int64?

        /// Whether the hub provably holds now what it held at `other`.
        package func matches(_ other: Mark) -> Bool {
            counter == other.counter && edits != nil && edits == other.edits
        }
    }

    /// The hub's poll rate unless `settingsd hub init --poll-rate` says otherwise: 10,000
    /// machines on one namespace then poll every 8 s, which cost PostgreSQL about 5 % of a core
    /// in `settings-bench fleet` (BENCHMARKS.md).
    package static let defaultRate: Int64 = 1_250
    /// The poll rates a hub may be given.
    package static let rates: ClosedRange<Int64> = 1...1_000_000

    /// The mark at the time of reading.
    package var mark: Mark
    /// The replicas the namespace saw in the last week (0 or more).
    package var replicas: Int64
    /// The polls a second the namespace's machines may make together (`rates`; the default when
    /// the hub's is missing or out of range).
    package var rate: Int64

    /// A plan from what the hub answered; anything out of range is read as the hub's defaults.
    package init(counter: Int64, edits: Int64?, replicas: Int64?, rate: Int64?) {
        mark = Mark(counter: counter, edits: edits.flatMap { $0 >= 0 ? $0 : nil })
        self.replicas = max(0, replicas ?? 0)
        self.rate = rate.flatMap { Self.rates.contains($0) ? $0 : nil } ?? Self.defaultRate
    }
}
