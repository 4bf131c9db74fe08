import Dispatch
import Foundation

/// Threads started at once (not on the test's cooperative pool), awaited without blocking it.
final class ThreadGroup: Sendable {
    private let group = DispatchGroup()

    /// Starts `body` on a new thread now.
    func run(_ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread.detachNewThread { [group] in
            body()
            group.leave()
        }
    }

    /// Waits until every thread has finished.
    func wait() async {
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }
}
