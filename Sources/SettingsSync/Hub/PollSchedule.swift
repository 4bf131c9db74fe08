import SettingsStore
import SettingsWire

/// When a hub link that polls (`HubPooling.transaction`) looks at the namespace's counter next:
/// at the least interval after a push of its own, at half the interval after another's change,
/// doubling with every quiet poll up to the longest, each wait shortened by up to a tenth at
/// random so that machines woken by the same change do not poll in step ever after (a tenth, not
/// more: a change waits for the longest wait, and the hub pays for the average one).
///
/// The longest is the configured most, stretched while the hub's database runs more
/// transactions a second than the poll budget: a fleet's idle cost is its machines divided by
/// the interval, so ten thousand machines that all poll every 5 s would keep a core busy. Every
/// twelfth quiet poll also reads the database's transaction count (`HubNamespace.poll`), and
/// each link stretches or shrinks on its own from the rate it saw, toward nine tenths of the
/// budget, and stays where the rate is within `settledBand` of it: so the fleet's polls settle
/// between nine tenths of the budget and the budget however many machines there are, and
/// whichever side they come from. A link whose quiet polls were mostly quiet
/// checks (`HubQuietCheck`) counts the rate at what such polls cost: two fifths of a counter's
/// poll for a fast-path call, three fifths for the look's statement (`HubQuietCheck.Kind.cost`).
package struct PollSchedule {
    /// The longest between comparisons of digests for a link that polls, in seconds (it skips
    /// those after changes): a fleet of 10,000 machines then costs at most some 33 comparisons a
    /// second, and none on a hub quiet since their last (`HubQuietCheck.vouchesForAgreement`).
    package static let comparisonInterval = 300.0
    /// Quiet polls at the longest interval between two readings of the hub's load.
    package static let pollsPerLoadReading = 12
    /// The most the longest interval stretches: twelve times the configured most.
    package static let maximumStretch = 12.0
    /// The share of the budget a link's weighed rate stretches or shrinks its interval toward.
    package static let goal = 0.9
    /// The shares of the budget within which a link leaves its longest interval as it is: from
    /// `goal`, since a link under it shrinks to it (a fleet left under it by its start-up's
    /// stretch stays there: with three quarters for the floor, 10,000 machines stretched twofold
    /// at once to 0.80 of the budget and stayed, polling every 10.0 s, at the edge of the burst's
    /// target), up to the budget, since only readings over it stretch. A link reading a little
    /// under the goal shrinks a little and raises the rate the others read, so links measuring
    /// the same hub a little apart do not chase each other.
    package static let settledBand = goal...1.0
    /// The shortest share of the interval a wait lasts (`nextWait()`).
    package static let shortestWait = 0.9
    /// The share of the budget over which one reading stretches the interval; under it, only
    /// the second reading in a row over the budget does. A fleet's own answer to a change (every
    /// machine pulls it) raises one reading of a settled fleet over the budget for a while, and
    /// stretching then made the next change wait longer (a fleet of 10,000 settled at 15.5 s
    /// took 20.9 s to take a burst of writers that followed three single changes); a fleet that
    /// starts polling every 5 s runs at three times the budget and more.
    package static let stretchAtOnce = 2.0
    /// The most one reading stretches the longest interval by. A link's first readings span the
    /// fleet's start-up, which they weigh by the link's own mix of polls (some of its first were
    /// counter polls, not yet quiet checks): stretching by the whole of what each read left links
    /// of one fleet up to half as far apart again, for good (at 10,000 machines, ×2.4 to ×2.9 at
    /// once, then 8.8 s against 11.1 s once settled, and a burst waits for the furthest); at most
    /// twofold, every link that stretches at once stretches alike (all 10,000 at 10.0 s).
    package static let largestStep = 2.0

    /// The least and the most time between polls, in seconds, as configured.
    package let bounds: ClosedRange<Double>
    /// The hub database's transactions a second above which the longest interval stretches
    /// (nil: it never does).
    package private(set) var budget: Double?
    /// The interval now, before the random shortening.
    package private(set) var interval: Double
    /// How many times the configured most the longest interval is now (1 or more).
    package private(set) var stretch = 1.0
    /// The hub database's transactions a second as last measured (nil: not yet).
    package private(set) var hubRate: Double?
    private var quietPolls = 0
    /// Quiet polls since the last reading of the load, and how many of them quiet checks answered.
    private var polledSinceReading = 0
    /// What quiet checks spared the server since the last reading, in counter polls.
    private var sparedSinceReading = 0.0
    private var lastReading: (transactions: Int64, at: Double)?
    /// Whether the last reading's weighed rate was over the budget.
    private var wasOver = false
    private var generator = SystemRandomNumberGenerator()

    package init(bounds: ClosedRange<Double>, budget: Double? = nil) {
        self.bounds = bounds
        self.budget = budget.flatMap { $0 > 0 ? $0 : nil }
        interval = bounds.lowerBound
    }

    /// The longest interval now: the configured most, stretched under load.
    package var longest: Double { bounds.upperBound * stretch }

    /// Whether the link polls at its longest interval (all is quiet).
    package var isAtLongest: Bool { interval >= longest }

    /// Whether the next poll should read the hub's transaction count too: on the first quiet
    /// poll at the longest interval, then on every `pollsPerLoadReading`th.
    package var readsLoad: Bool {
        budget != nil && isAtLongest && (lastReading == nil || quietPolls >= Self.pollsPerLoadReading)
    }

    /// This replica pushed: poll soon again (whoever it talks with may answer).
    package mutating func active() {
        interval = bounds.lowerBound
    }

    /// Another replica's change arrived: poll at half the interval. Not at once: on a fleet of
    /// thousands, every machine hears the same change, and all polling at the least interval
    /// would multiply the hub's load by `bounds.upperBound / bounds.lowerBound`.
    package mutating func heard() {
        interval = max(bounds.lowerBound, interval / 2)
    }

    /// A poll found nothing new: wait longer next time, up to the longest. `checkedBy`: the kind
    /// of quiet check that answered it (`HubQuietCheck`), whose cost the next reading weighs.
    package mutating func quiet(checkedBy check: HubQuietCheck.Kind? = nil) {
        if isAtLongest { quietPolls += 1 }
        polledSinceReading += 1
        if let check { sparedSinceReading += 1 - check.cost }
        interval = min(interval * 2, longest)
    }

    /// A poll read the hub database's `transactions` so far at `now` (seconds on a monotonic
    /// clock). From the rate since the last reading, weighed by what this link's quiet polls
    /// since cost (`HubQuietCheck.Kind.cost`): over the budget at two readings in a row, or over
    /// twice the budget at one (`stretchAtOnce`), the longest interval stretches so that the rate
    /// would fall to nine tenths of it (at most twofold a reading, `largestStep`); under nine
    /// tenths, it shrinks so that the rate would rise to it (at most by half a reading, never
    /// below the configured most). A count that went back
    /// (statistics reset, a failover) only starts a new measure; a reading less than a second
    /// after the last waits for a longer one (the server's statistics lag about that much).
    package mutating func measured(transactions: Int64, at now: Double) {
        guard let budget else { return }
        quietPolls = 0
        guard let last = lastReading, transactions >= last.transactions else {
            lastReading = (transactions, now)
            (polledSinceReading, sparedSinceReading, wasOver) = (0, 0, false)
            return
        }
        guard now - last.at >= 1 else { return }
        lastReading = (transactions, now)
        let rate = Double(transactions - last.transactions) / (now - last.at)
        hubRate = rate
        // The budget counts polls of the counter: where quiet checks answered this link's polls,
        // those of the fleet around it cost the server less, and count for less.
        let spared = sparedSinceReading / Double(max(1, polledSinceReading))
        (polledSinceReading, sparedSinceReading) = (0, 0)
        let weighed = rate * (1 - spared)
        let share = weighed / budget
        let isOver = share > Self.settledBand.upperBound
        defer { wasOver = isOver }
        if isOver && (wasOver || share > Self.stretchAtOnce) {
            stretch = min(Self.maximumStretch, stretch * min(Self.largestStep, share / Self.goal))
        } else if share < Self.settledBand.lowerBound {
            stretch = max(1, stretch * max(0.5, share / Self.goal))
        }
        interval = min(interval, longest)
    }

    /// The hub cannot tell its load (the role may not read the database's statistics): poll within the
    /// configured bounds from now on.
    package mutating func stopReadingLoad() {
        budget = nil
        stretch = 1
        interval = min(interval, longest)
    }

    /// How long to wait before the next poll.
    package mutating func nextWait() -> Double {
        interval * Double.random(in: Self.shortestWait...1.0, using: &generator)
    }
}
