import SettingsStore
import SettingsWire

/// When a hub link that polls (`HubPooling.transaction`) looks at the namespace's counter next.
///
/// The longest wait, while all is quiet, comes from a formula, not from measuring the hub:
/// the machines of a namespace, `n`, poll together at most the hub's rate, `r` polls a second,
/// so each waits `n / r` seconds, never less than the configured floor (a change reaches the
/// machines of a small namespace within it) and never more than `ceiling` (nor than the floor,
/// where that is longer). `n` and `r` come from the hub (`HubPollPlan`), read when the link
/// connects and at every routine comparison. The same rule paces a fleet of any size: 10,000
/// machines at the default 1,250 a second poll every 8 s, ten of them every 5 s (the floor).
///
/// Within that, the interval follows the link's own activity: the least after a push of its
/// own (whoever it talks with may answer), half the interval after another's change arrived
/// (others may follow), doubling with every quiet poll up to the longest. Each wait is
/// shortened by up to `jitter` of it at random, so that machines woken by the same change do
/// not poll in step ever after; never lengthened, so a change waits at most the longest.
package struct PollSchedule {
    /// The longest wait however many machines share a namespace: with more machines than the
    /// hub's rate allows in two minutes, a change still reaches every one within two minutes,
    /// and the hub pays for the surplus.
    package static let ceiling = Duration.seconds(120)
    /// The share of a wait by which it may be shortened at random.
    package static let jitter = 0.1
    /// The longest between routine comparisons of digests for a link that polls (it skips those
    /// after changes, and those a quiet hub vouches for: `HubPollPlan.Mark`); each reads the
    /// poll plan too.
    package static let comparisonInterval = Duration.seconds(300)

    /// The least time between polls (after this machine's own push) and the floor of the
    /// longest, as configured.
    package let bounds: ClosedRange<Duration>
    /// The longest time between polls now: the formula's, for the last plan read.
    package private(set) var longest: Duration
    /// The interval now, before the random shortening.
    package private(set) var interval: Duration
    /// The last plan read (nil: none yet).
    package private(set) var plan: HubPollPlan?
    private var generator = SystemRandomNumberGenerator()

    package init(bounds: ClosedRange<Duration>) {
        self.bounds = bounds
        longest = bounds.upperBound
        interval = bounds.lowerBound
    }

    /// The longest wait for `replicas` machines polling together at `rate` a second at most,
    /// with `floor` as configured: `replicas / rate`, within `floor…max(floor, ceiling)`.
    package static func longest(replicas: Int64, rate: Int64, floor: Duration) -> Duration {
        guard rate > 0 else { return floor }
        let milliseconds = replicas.multipliedReportingOverflow(by: 1_000)
        let formula: Duration =
            milliseconds.overflow ? ceiling : .milliseconds(max(0, milliseconds.partialValue / rate))
        return min(max(formula, floor), max(ceiling, floor))
    }

    /// The hub's plan was read: the longest interval follows it, and a link that was quiet (at
    /// its longest) stays so at the new longest.
    package mutating func follow(_ plan: HubPollPlan) {
        let wasQuiet = isAtLongest
        self.plan = plan
        longest = Self.longest(replicas: plan.replicas, rate: plan.rate, floor: bounds.upperBound)
        interval = wasQuiet ? longest : min(interval, longest)
    }

    /// Whether the link polls at its longest interval (all is quiet).
    package var isAtLongest: Bool { interval >= longest }

    /// This replica pushed: poll soon again (whoever it talks with may answer).
    package mutating func active() {
        interval = bounds.lowerBound
    }

    /// Another replica's change arrived: poll at half the interval. Not at the least: on a fleet
    /// of thousands every machine hears the same change, and all polling at the least interval
    /// would multiply the hub's load by the longest over the least.
    package mutating func heard() {
        interval = max(bounds.lowerBound, interval / 2)
    }

    /// A poll found nothing new: wait longer next time, up to the longest.
    package mutating func quiet() {
        interval = min(interval * 2, longest)
    }

    /// How long to wait before the next poll.
    package mutating func nextWait() -> Duration {
        interval * Double.random(in: (1 - Self.jitter)...1.0, using: &generator)
    }
}
