/// When a hub link that polls (`HubPooling.transaction`) looks at the namespace's counter next:
/// at the least interval after a push of its own, at half the interval after another's change,
/// doubling with every quiet poll up to the most, each wait shortened by up to a fifth at random
/// so that machines woken by the same change do not poll in step ever after.
package struct PollSchedule {
    /// The longest between comparisons of digests for a link that polls, in seconds (it skips
    /// those after changes): a fleet of 10,000 machines then costs some 33 comparisons a second.
    package static let comparisonInterval = 300.0

    /// The least and the most time between polls, in seconds.
    package let bounds: ClosedRange<Double>
    /// The interval now, before the random shortening.
    package private(set) var interval: Double
    private var generator = SystemRandomNumberGenerator()

    package init(bounds: ClosedRange<Double>) {
        self.bounds = bounds
        interval = bounds.lowerBound
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

    /// A poll found nothing new: wait longer next time, up to the most.
    package mutating func quiet() {
        interval = min(interval * 2, bounds.upperBound)
    }

    /// How long to wait before the next poll.
    package mutating func nextWait() -> Double {
        interval * Double.random(in: 0.8...1.0, using: &generator)
    }
}
