/// When a hub link that polls (`HubPooling.transaction`) looks at the namespace's counter next:
/// at the least interval after activity, doubling with every quiet poll up to the most, each
/// wait shortened by up to a fifth at random so that machines woken by the same change do not
/// poll in step ever after.
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

    /// Something changed, here or on the hub: poll soon again.
    package mutating func active() {
        interval = bounds.lowerBound
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
