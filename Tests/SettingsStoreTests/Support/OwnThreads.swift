import Foundation
import Testing

/// Runs a suite's tests on threads of their own instead of Swift's cooperative pool.
///
/// The pool has one thread per core (two here), and tests that drive real daemons block theirs
/// (`waitUntilExit`, a socket read, `psql`): two such tests at once stop every other test's
/// continuation, their own `waitUntil` included, until one returns. On `TestThreads` a blocked
/// test holds one of sixteen threads, and the cooperative pool stays free for the rest.
struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreads {
    /// The suite's tests run on `TestThreads`, not on the cooperative pool.
    static var ownThreads: Self { OwnThreads() }
}

/// A task executor over a fixed set of threads taking jobs in order from one queue.
final class TestThreads: TaskExecutor, @unchecked Sendable {  // `jobs` is only touched under `condition`
    static let shared = TestThreads(count: 16)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(count: Int) {
        for index in 0..<count {
            let thread = Thread { self.work() }
            thread.name = "test-thread-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() -> Never {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next > 1024, next * 2 > jobs.count {
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
