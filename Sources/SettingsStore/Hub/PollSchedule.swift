/// When a hub link that polls (`HubPooling.transaction`) looks at the namespace's counter next:
/// at the least interval after activity, doubling with every quiet poll up to the most, each
/// wait shortened by up to a fifth at random so that machines woken by the same change do not
/// poll in step ever after.
struct PollSchedule {
    /// The least and the most time between polls, in seconds.
    let bounds: ClosedRange<Double>
    /// The interval now, before the random shortening.
    private(set) var interval: Double
    private var generator = SystemRandomNumberGenerator()

    init(bounds: ClosedRange<Double>) {
        self.bounds = bounds
        interval = bounds.lowerBound
    }

    /// Something changed, here or on the hub: poll soon again.
    mutating func active() {
        interval = bounds.lowerBound
    }

    /// A poll found nothing new: wait longer next time, up to the most.
    mutating func quiet() {
        interval = min(interval * 2, bounds.upperBound)
    }

    /// How long to wait before the next poll.
    mutating func nextWait() -> Double {
        interval * Double.random(in: 0.8...1.0, using: &generator)
    }
}
