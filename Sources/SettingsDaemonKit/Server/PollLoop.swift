import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

#if canImport(Glibc)
    import Glibc
    internal import CLinux
#endif

/// A single-threaded event loop over `epoll(7)`: descriptors with read/write interest, tasks
/// posted from other threads, and a hook after each round of events (where the server commits its
/// batch).
///
/// Everything registered runs on the loop's own thread, so handlers need no locks and a request
/// costs one wake-up, not a hop through a thread pool. A round costs what is ready, not what is
/// registered: with `poll(2)`, 300 idle connections halved the round trips of a busy one.
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

    private let epoll: Int32
    /// Descriptors epoll refused to watch, told so at the next round.
    private var refused: [Int32] = []
    /// The most events one wait returns; more wait for the next round.
    private static let eventsPerRound = 256

    init() throws(SettingsError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else {
            throw SettingsError(
                .io, "cannot create the event loop's epoll instance: \(String(cString: strerror(errno)))")
        }
        do {
            wake = try WakePipe()
        } catch {
            Glibc.close(epoll)  // `deinit` does not run for an object not fully initialized
            throw error
        }
        // From here on a failure runs `deinit`, which closes the epoll instance.
        guard control(EPOLL_CTL_ADD, wake.readEnd, .read) else {
            throw SettingsError(
                .io, "cannot watch the event loop's wake-up pipe: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        Glibc.close(epoll)
    }

    /// Whether the caller runs on the loop thread.
    var isOnLoopThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs `task` on the loop thread at its next round, even when called from the loop thread:
    /// it is always enqueued, never run inline, so a task can never re-enter a lock its caller
    /// holds (a commit that wakes sessions, say). Tasks run in the order they were enqueued.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let wasEmpty = tasks.withLock { tasks in
            defer { tasks.append(task) }
            return tasks.isEmpty
        }
        // The loop looks for tasks before it waits again: from its own thread no wake-up is needed.
        if wasEmpty && !isOnLoopThread { wake.signal() }
    }

    /// Watches `fd` (on the loop thread).
    func register(_ fd: Int32, interest: Interest, handler: @escaping Handler) {
        handlers[fd] = handler
        interests[fd] = []
        setInterest(interest, for: fd)
    }

    /// Changes what `fd` is watched for (on the loop thread). A descriptor with no interest is
    /// taken out of the epoll set, so it reports nothing, not even a hang-up, until it has one.
    ///
    /// If the kernel refuses to watch it (out of memory, or past `fs.epoll.max_user_watches`),
    /// the descriptor is left unwatched and its handler hears `POLLNVAL` at the start of the next
    /// round, as for a descriptor that is not open: a connection closes, the listener pauses.
    func setInterest(_ interest: Interest, for fd: Int32) {
        guard handlers[fd] != nil, let current = interests[fd], current != interest else { return }
        interests[fd] = interest
        let operation =
            current.isEmpty ? EPOLL_CTL_ADD : interest.isEmpty ? EPOLL_CTL_DEL : EPOLL_CTL_MOD
        if !control(operation, fd, interest), operation != EPOLL_CTL_DEL {
            _ = control(EPOLL_CTL_DEL, fd, [])
            interests[fd] = []
            refused.append(fd)
        }
    }

    /// Stops watching `fd` (on the loop thread); the caller closes it.
    func unregister(_ fd: Int32) {
        if let current = interests[fd], !current.isEmpty { _ = control(EPOLL_CTL_DEL, fd, []) }
        handlers[fd] = nil
        interests[fd] = nil
        refused.removeAll { $0 == fd }
    }

    /// Adds, changes or removes `fd` in the epoll set; false when the kernel refuses.
    private func control(_ operation: Int32, _ fd: Int32, _ interest: Interest) -> Bool {
        var event = epoll_event()
        event.events = UInt32(UInt16(bitPattern: interest.rawValue))
        event.data.fd = fd
        return epoll_ctl(epoll, operation, fd, &event) == 0
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
        var events = [epoll_event](repeating: epoll_event(), count: Self.eventsPerRound)
        let tick = Duration.milliseconds(Int64(tickMilliseconds))
        var nextTick = Deadline.after(tick)
        while !isStopping {
            let hasTasks = tasks.withLock { !$0.isEmpty }
            // Until the next tick, on the monotonic clock: a wall clock stepped back cannot stop it.
            let wait = refused.isEmpty && !hasTasks ? min(nextTick.pollTimeout, tickMilliseconds) : 0
            let ready = epoll_wait(epoll, &events, Int32(events.count), wait)
            let toldNow = refused
            refused = []  // a handler may be refused again, for the round after
            for fd in toldNow { handlers[fd]?(Int16(POLLNVAL)) }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for event in events.prefix(Int(ready)) {
                let fd = event.data.fd
                if fd == wake.readEnd {
                    wake.drain()
                } else {
                    // epoll's event bits are poll's (EPOLLIN is POLLIN, ...); a handler that closed
                    // another descriptor earlier in the round has removed its handler.
                    handlers[fd]?(Int16(truncatingIfNeeded: event.events))
                }
            }
            runTasks()
            afterRound()
            let now = Deadline.now
            if now >= nextTick {
                nextTick = now + tick
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
