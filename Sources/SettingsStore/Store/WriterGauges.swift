import Synchronization

/// The writer's counters that `status`, `sync --wait` and the sync sessions read often: the last
/// sequence number and the number of history records, published by the writer as it changes them
/// so a reader takes no lock. Read under the writer lock, they waited for whatever commit was
/// running, and a waiting reader spun on a contended lock (a fifth of a daemon's CPU during an
/// initial sync, polled by `status`).
final class WriterGauges: Sendable {
    private let sequence: Atomic<Int64>
    private let history: Atomic<Int>

    /// Gauges showing the writer's counters as it starts.
    package init(lastSequence: Int64, historyCount: Int) {
        sequence = Atomic(lastSequence)
        history = Atomic(historyCount)
    }

    /// The last sequence number committed (its commit is durable by the time it shows here).
    var lastSequence: Int64 { sequence.load(ordering: .acquiring) }

    /// How many history records the database holds.
    var historyCount: Int { history.load(ordering: .acquiring) }

    func publish(lastSequence: Int64) {
        sequence.store(lastSequence, ordering: .releasing)
    }

    func publish(historyCount: Int) {
        history.store(historyCount, ordering: .releasing)
    }
}
