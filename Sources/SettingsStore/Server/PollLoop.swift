import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A single-threaded `poll(2)` event loop: descriptors with read/write interest, tasks posted from
/// other threads, and a hook after each round of events (where the server commits its batch).
///
/// Everything registered runs on the loop's own thread, so handlers need no locks and a request
/// costs one wake-up, not a hop through a thread pool.
///
/// Unchecked Sendable: the descriptor table is touched only on the loop thread; `execute` is the
/// thread-safe way in (a mutex-guarded queue plus a wake-up pipe).
final class PollLoop: @unchecked Sendable {  // table: loop thread only; `execute` locks
    /// What a registered descriptor wants to hear about.
    struct Interest: OptionSet {
        let rawValue: Int16
        static let read = Interest(rawValue: Int16(POLLIN))
        static let write = Interest(rawValue: Int16(POLLOUT))
    }

    /// A descriptor's handler: called with the poll `revents` when it is ready.
    typealias Handler = (Int16) -> Void

    private var handlers: [Int32: Handler] = [:]
    private var interests: [Int32: Interest] = [:]
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let wake: WakePipe
    private let loopThread = Mutex<pthread_t?>(nil)
    private var isStopping = false
    /// Called after every round of ready descriptors and tasks, on the loop thread.
    var afterRound: () -> Void = {}
    /// Called about every `tickMilliseconds` on the loop thread, for time-outs.
    var onTick: () -> Void = {}
    /// How often `onTick` runs.
    var tickMilliseconds: Int32 = 250

    init() throws(SettingsError) {
        wake = try WakePipe()
    }

    /// Whether the caller runs on the loop thread.
    var isOnLoopThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs `task` on the loop thread: at once if already there, else at its next round.
    func execute(_ task: @escaping @Sendable () -> Void) {
        if isOnLoopThread {
            task()
            return
        }
        let wasEmpty = tasks.withLock { tasks in
            defer { tasks.append(task) }
            return tasks.isEmpty
        }
        if wasEmpty { wake.signal() }
    }

    /// Watches `fd` (on the loop thread).
    func register(_ fd: Int32, interest: Interest, handler: @escaping Handler) {
        handlers[fd] = handler
        interests[fd] = interest
    }

    /// Changes what `fd` is watched for (on the loop thread).
    func setInterest(_ interest: Interest, for fd: Int32) {
        if handlers[fd] != nil { interests[fd] = interest }
    }

    /// Stops watching `fd` (on the loop thread); the caller closes it.
    func unregister(_ fd: Int32) {
        handlers[fd] = nil
        interests[fd] = nil
    }

    /// Makes `run()` return after the current round (from any thread).
    func stop() {
        execute { [self] in isStopping = true }
    }

    /// Runs the loop on a new thread; `onExit` runs on that thread when the loop has stopped.
    func runOnNewThread(onExit: @escaping @Sendable () -> Void) throws(SettingsError) {
        let body: @Sendable () -> Void = { [self] in
            run()
            onExit()
        }
        try DetachedThread.start("event loop", body)
    }

    /// Runs rounds until `stop()`; call on the thread that is to be the loop thread.
    func run() {
        loopThread.withLock { $0 = pthread_self() }
        var descriptors: [pollfd] = []
        var nextTick = SettingsConfiguration.systemClock() + UInt64(tickMilliseconds)
        while !isStopping {
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0))
            for (fd, interest) in interests where !interest.isEmpty {
                descriptors.append(pollfd(fd: fd, events: interest.rawValue, revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), tickMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if descriptors[0].revents != 0 { wake.drain() }
            for descriptor in descriptors.dropFirst() where descriptor.revents != 0 {
                handlers[descriptor.fd]?(descriptor.revents)
            }
            runTasks()
            afterRound()
            let now = SettingsConfiguration.systemClock()
            if now >= nextTick {
                nextTick = now + UInt64(tickMilliseconds)
                onTick()
            }
        }
        loopThread.withLock { $0 = nil }
    }

    private func runTasks() {
        let pending = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in pending { task() }
    }
}
