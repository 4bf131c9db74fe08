import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

/// Many machines' hub links in one process, for `settings-bench fleet`: each machine is one
/// connection that sends the link's own statements (`HubNamespace`) at the link's own intervals
/// (`PollSchedule`, the comparison safety net, the poll plan), without a store or a thread of
/// its own. A few worker threads each serve a slice of the machines.
///
/// `.poll` is the pooled link (through PgBouncer); `.listen` the direct one (`LISTEN`, woken by
/// `NOTIFY`), as its peer.
final class FleetSimulation: Sendable {
    enum Mode: Sendable {
        /// Polls within the interval, whose longest the hub's poll plan sets (`PollSchedule`).
        case poll(ClosedRange<Duration>)
        case listen
    }

    /// What every machine has to reach (a hub sequence number), since when, and when each did.
    private struct Goal {
        var sequence: Int64 = .max
        var startedAt: Double = 0
        var arrivals: [Double] = []
    }

    /// The policy revision every machine has to apply and report, since when, and when each did.
    private struct PolicyGoal {
        var name = ""
        var revision: Int64 = .max
        var startedAt: Double = 0
        var arrivals: [Double] = []
    }

    private let workers: [Worker]
    private let goal = Mutex(Goal())
    private let policyGoal = Mutex(PolicyGoal())
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchGroup()
    let count: Int
    /// When the machines began to poll (`now()`), every one connected.
    let startedAt: Double

    /// Connects `count` machines with `conninfo` (in parallel, one worker thread per slice) and
    /// starts them.
    init(count: Int, conninfo: String, mode: Mode, threads: Int = 16) throws {
        self.count = count
        let slices = (0..<threads).map { index in count / threads + (index < count % threads ? 1 : 0) }
        let built = Mutex<[Result<Worker, SettingsError>]>([])
        let connecting = DispatchGroup()
        for size in slices where size > 0 {
            connecting.enter()
            Thread.detachNewThread {
                defer { connecting.leave() }
                let result: Result<Worker, SettingsError>
                do throws(SettingsError) {
                    result = .success(try Worker(machines: size, conninfo: conninfo, mode: mode))
                } catch {
                    result = .failure(error)
                }
                built.withLock { $0.append(result) }
            }
        }
        connecting.wait()
        workers = try built.withLock { results in try results.map { try $0.get() } }
        startedAt = Self.now()
        for worker in workers {
            finished.enter()
            Thread.detachNewThread { [self] in
                defer { finished.leave() }
                worker.run(simulation: self)
            }
        }
    }

    /// Stops every worker and closes every connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }

    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Statements sent so far, by every machine.
    var statements: Int { workers.reduce(0) { $0 + $1.statements.load(ordering: .relaxed) } }

    /// The machines that have not reached the goal: their cursor, the counter they saw, and their
    /// interval, for a failure's message.
    /// A few machines not at their longest interval, as a failed settle reports them.
    var unsettled: String {
        workers.flatMap { $0.describeUnsettled() }.prefix(5).joined(separator: "; ")
    }

    var laggards: String {
        let goal = self.goal.withLock { $0.sequence }
        return workers.flatMap { $0.describe(below: goal) }.prefix(5).joined(separator: "; ")
    }

    /// Polls that were fast-path calls (`HubPollCall`), by every machine.
    var pollCalls: Int { workers.reduce(0) { $0 + $1.pollCalls.load(ordering: .relaxed) } }

    /// Comparisons of digests run, by every machine (a quiet hub's are spared: `HubPollPlan`).
    var comparisons: Int { workers.reduce(0) { $0 + $1.comparisons.load(ordering: .relaxed) } }

    /// Statements that failed, on every machine.
    var failures: Int { workers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) } }

    /// Machines whose poll interval is at its longest now (every one of them, once all is quiet).
    var quietMachines: Int { workers.reduce(0) { $0 + $1.quiet.load(ordering: .relaxed) } }

    /// Every polling machine's longest interval now, in seconds, sorted (empty: they listen).
    var longestIntervals: [Double] {
        workers.flatMap { $0.longest.withLock { $0 } }.sorted()
    }

    /// Polling machines whose last poll plan counted at least `replicas` machines.
    func machines(planningFor replicas: Int64) -> Int {
        workers.reduce(0) { $0 + $1.machines(planningFor: replicas) }
    }

    /// Machines that have compared digests with the hub and agreed at least once.
    var agreedMachines: Int { workers.reduce(0) { $0 + $1.agreed.load(ordering: .relaxed) } }

    /// From now, records when each machine holds hub sequence number `sequence`.
    func expect(_ sequence: Int64) {
        goal.withLock { $0 = Goal(sequence: sequence, startedAt: Self.now(), arrivals: []) }
    }

    /// The seconds each machine took to reach the goal so far.
    var arrivals: [Double] { goal.withLock { $0.arrivals } }

    /// Called by a worker after `machine` pulled: counts it once it holds the goal.
    fileprivate func reached(_ machine: Machine) {
        goal.withLock { goal in
            guard machine.cursor >= goal.sequence, machine.reported < goal.sequence else { return }
            machine.reported = goal.sequence
            goal.arrivals.append(Self.now() - goal.startedAt)
        }
    }

    /// From now, records when each machine has applied and reported `revision` of policy `name`.
    func expectPolicy(_ name: String, revision: Int64) {
        policyGoal.withLock { $0 = PolicyGoal(name: name, revision: revision, startedAt: Self.now()) }
    }

    /// The seconds each machine took to report the policy goal so far.
    var policyArrivals: [Double] { policyGoal.withLock { $0.arrivals } }

    /// Called by a worker after `machine` reported the policy `revisions` it applied.
    fileprivate func reported(_ revisions: [String: Int64]) {
        policyGoal.withLock { goal in
            guard revisions[goal.name] == goal.revision else { return }
            goal.arrivals.append(Self.now() - goal.startedAt)
        }
    }

    /// Asks `machines` machines (spread over the workers) to push one key each, at once.
    func burst(machines: Int, tag: String) {
        var remaining = machines
        for (index, worker) in workers.enumerated() {
            let share = min(worker.count, (remaining + workers.count - index - 1) / (workers.count - index))
            remaining -= share
            worker.pushes.withLock {
                $0.append(contentsOf: (0..<share).map { "fleet.\(tag).\(index).\($0)" })
            }
        }
    }

    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// One simulated machine: its connection, cursor and schedule.
private final class Machine: @unchecked Sendable {  // touched by its worker's thread only
    let hub: HubNamespace
    let replica = ReplicaID.random()
    var cursor: Int64
    var seenCounter: Int64
    var schedule: PollSchedule?
    /// What its connection knows of the poll's fast-path function, as the link keeps it.
    var call = HubPollCall()
    /// The hub's mark before its last comparison that agreed (`HubPollPlan.Mark`).
    var agreedMark: HubPollPlan.Mark?
    var due: Double
    var nextComparison: Double
    var reported: Int64 = 0
    var pushed: Int64 = 0
    /// Sent a statement since it last read notifications: some may wait in libpq, not on the socket.
    var sentStatements = false
    /// The namespace's policy mark when it last read its policies (as `HubConnector.followPolicy`).
    var policyMark: Int64 = -1

    init(hub: HubNamespace, schedule: PollSchedule?) throws(SettingsError) {
        self.hub = hub
        self.schedule = schedule
        cursor = try hub.lastSequence()
        seenCounter = cursor
        (due, nextComparison) = (.infinity, .infinity)
        // As the link as it connects: its policies read, applied and reported.
        _ = try followPolicy()
        guard schedule != nil else { return }
        // As the link: its first quiet round records its position (which the hub counts among
        // the namespace's machines), and it reads the poll plan as it connects.
        try hub.push([], from: replica, through: 0)
        self.schedule?.follow(try hub.pollPlan(for: replica))
    }

    /// Reads the policies when the namespace's policy mark moved since it last did, and reports
    /// them applied whole (as a machine whose schema takes every key); returns the revisions
    /// reported, nil when the mark had not moved.
    func followPolicy() throws(SettingsError) -> [String: Int64]? {
        let mark = try hub.policySequence()
        guard mark != policyMark else { return nil }
        policyMark = mark
        let assignments = try hub.policies(for: replica).assignments
        let fleet = FleetPolicy(sources: ["hub": assignments], schema: SettingsSchema(), isStrict: false)
        let report = Settings.FleetPolicyReport(fleet)
        try hub.report(report, unreadable: [], for: replica)
        return report.revisions
    }

    /// Its first poll and first comparison, from when its worker starts (not when it connected:
    /// a worker that connected its machines early would otherwise find all their comparisons due
    /// at once, and they would stay in step, a bunch every interval).
    func start(at now: Double, comparisonInterval: Double) {
        due = now + Double.random(in: 0...(schedule?.bounds.lowerBound.seconds ?? 1))
        // The machines' comparisons fall anywhere in the interval, as those of a fleet do.
        nextComparison = now + Double.random(in: 0..<comparisonInterval)
    }
}

/// A thread's slice of the machines.
private final class Worker: Sendable {
    private let machines: [Machine]
    /// How many machines it serves.
    var count: Int { machines.count }
    let statements = Atomic<Int>(0)
    /// Polls answered by a fast-path call (`HubPollCall`).
    let pollCalls = Atomic<Int>(0)
    /// Comparisons of digests its machines ran (the rest were spared).
    let comparisons = Atomic<Int>(0)
    let quiet = Atomic<Int>(0)
    /// Machines that agreed with the hub at least once.
    let agreed = Atomic<Int>(0)
    /// Each machine's longest interval as of the last pass.
    let longest = Mutex<[Double]>([])
    /// Each machine's replicas counted by its last poll plan, as of the last pass.
    private let planned = Mutex<[Int64]>([])
    /// Keys its machines are to push, one each.
    let pushes = Mutex<[String]>([])
    /// Statements that failed (each is retried at the machine's next poll).
    let failures = Atomic<Int>(0)
    private let isPolling: Bool
    private let comparisonInterval: Double

    init(machines count: Int, conninfo: String, mode: FleetSimulation.Mode) throws(SettingsError) {
        let polling: ClosedRange<Duration>?
        switch mode {
        case .poll(let interval): polling = interval
        case .listen: polling = nil
        }
        isPolling = polling != nil
        comparisonInterval = isPolling ? PollSchedule.comparisonInterval.seconds : 30
        var machines: [Machine] = []
        for _ in 0..<count {
            let connection = try PostgresConnection(
                conninfo: conninfo, defaults: ["application_name": "fleet"])
            let hub = try HubNamespace(connection: connection, namespace: nil, listens: polling == nil)
            machines.append(try Machine(hub: hub, schedule: polling.map { PollSchedule(bounds: $0) }))
        }
        self.machines = machines
    }

    func run(simulation: FleetSimulation) {
        let started = FleetSimulation.now()
        for machine in machines { machine.start(at: started, comparisonInterval: comparisonInterval) }
        var published = false
        while !simulation.isStopped {
            let now = FleetSimulation.now()
            pushQueued(now: now, simulation: simulation)
            var planned = !published
            if isPolling {
                for machine in machines where machine.due <= now { poll(machine, simulation: simulation) }
            } else {
                listen(until: now + 0.05, simulation: simulation)
            }
            for machine in machines where machine.nextComparison <= now {
                machine.nextComparison = now + comparisonInterval
                compare(machine, simulation: simulation)
                planned = true
            }
            statements.store(machines.reduce(0) { $0 + $1.hub.connection.statementCount }, ordering: .relaxed)
            quiet.store(machines.count { $0.schedule?.isAtLongest ?? true }, ordering: .relaxed)
            agreed.store(machines.count { $0.agreedMark != nil }, ordering: .relaxed)
            // The longest intervals change only with a poll plan.
            if planned {
                published = true
                longest.withLock { $0 = machines.compactMap { $0.schedule?.longest.seconds } }
                self.planned.withLock { $0 = machines.map { $0.schedule?.plan?.replicas ?? 0 } }
            }
            if isPolling {
                let next = machines.map(\.due).min() ?? now + 0.05
                let wait = min(max(next - FleetSimulation.now(), 0), 0.05)
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
            }
        }
    }

    /// A poll as the pooled link makes it: a fast-path call asking whether the counter moved;
    /// when it did, the link's round (pulls until one holds every row after the cursor, whose
    /// counter says whether to pull once more at once), then half the interval.
    private func poll(_ machine: Machine, simulation: FleetSimulation) {
        guard var schedule = machine.schedule else { return }
        defer {
            machine.schedule = schedule
            machine.due = FleetSimulation.now() + schedule.nextWait().seconds
        }
        let polled: HubNamespace.Poll
        do {
            polled = try machine.hub.poll(from: machine.seenCounter, call: &machine.call)
        } catch {
            failed(error)
            return
        }
        if polled.byCall { pollCalls.add(1, ordering: .relaxed) }
        guard polled.moved else {
            schedule.quiet()
            return
        }
        do throws(SettingsError) {
            let start = machine.cursor
            var retried = false
            while true {
                let before = machine.cursor
                // As the link: the last pull's counter, not another statement to ask it.
                if let counter = pull(machine, simulation: simulation) {
                    machine.seenCounter = counter
                } else {
                    machine.seenCounter = try machine.hub.lastSequence()
                }
                let progressed = machine.cursor != before
                guard machine.seenCounter > machine.cursor, progressed || !retried else { break }
                retried = !progressed
            }
            if machine.cursor != start { schedule.heard() }
        } catch {
            failed(error)
        }
    }

    /// A routine comparison as the link makes it. A polling link reads the poll plan first, and
    /// spares the comparison while the hub holds what it held when the last one agreed
    /// (`HubPollPlan.Mark`); otherwise it runs its round's pull, then the digest. The fleet holds
    /// what the hub holds, so a digest read agrees.
    private func compare(_ machine: Machine, simulation: FleetSimulation) {
        var mark: HubPollPlan.Mark?
        if machine.schedule != nil {
            do {
                let plan = try machine.hub.pollPlan(for: machine.replica)
                machine.schedule?.follow(plan)
                mark = plan.mark
            } catch {
                failed(error)
                return
            }
            if let agreed = machine.agreedMark, let mark, mark.matches(agreed) { return }
        }
        comparisons.add(1, ordering: .relaxed)
        pull(machine, simulation: simulation)
        machine.agreedMark = (try? machine.hub.digest()) != nil ? mark : nil
        machine.sentStatements = true
    }

    /// The direct link's wait: `poll(2)` on every connection until one is notified, then a pull.
    private func listen(until deadline: Double, simulation: FleetSimulation) {
        for machine in machines where machine.sentStatements {
            machine.sentStatements = false
            if let notified = try? machine.hub.connection.notifications(), !notified.isEmpty {
                pull(machine, simulation: simulation)
            }
        }
        var descriptors = machines.map {
            pollfd(fd: $0.hub.connection.socket, events: Int16(POLLIN), revents: 0)
        }
        let timeout = Int32(max(0, deadline - FleetSimulation.now()) * 1000)
        guard Glibc.poll(&descriptors, nfds_t(descriptors.count), timeout) > 0 else { return }
        for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
            let machine = machines[index]
            guard let notified = try? machine.hub.connection.notifications(), !notified.isEmpty else {
                continue
            }
            pull(machine, simulation: simulation)
        }
    }

    /// Pulls until a batch holds every row after the cursor; returns the counter the last batch
    /// saw (nil: none, or a statement failed).
    @discardableResult
    private func pull(_ machine: Machine, simulation: FleetSimulation) -> Int64? {
        let limits = SettingsLimits.desktop
        machine.sentStatements = true
        let start = machine.cursor
        defer {
            simulation.reached(machine)
            // As the link: a cursor that moved may have moved with a policy write.
            if machine.cursor != start {
                do throws(SettingsError) {
                    if let revisions = try machine.followPolicy() { simulation.reported(revisions) }
                } catch {
                    failed(error)
                }
            }
        }
        while true {
            do {
                let batch = try machine.hub.pull(after: machine.cursor, for: machine.replica, limits: limits)
                guard batch.through > machine.cursor else { return batch.counter }
                machine.cursor = batch.through
                if batch.complete { return batch.counter }
            } catch {
                failed(error)
                return nil
            }
        }
    }

    func machines(planningFor replicas: Int64) -> Int {
        planned.withLock { $0.count { $0 >= replicas } }
    }

    func describeUnsettled() -> [String] {
        let now = FleetSimulation.now()
        return machines.filter { !($0.schedule?.isAtLongest ?? true) }.map { machine in
            "interval \(machine.schedule?.interval.seconds ?? 0) s of \(machine.schedule?.longest.seconds ?? 0) s, cursor \(machine.cursor), counter seen \(machine.seenCounter), next poll in \(String(format: "%.1f", machine.due - now)) s"
        }
    }

    func describe(below goal: Int64) -> [String] {
        machines.filter { $0.reported < goal }.map { machine in
            "cursor \(machine.cursor), counter seen \(machine.seenCounter), interval \(machine.schedule?.interval.seconds ?? 0) s, pushed \(machine.pushed)"
        }
    }

    private func failed(_ error: SettingsError) {
        if failures.add(1, ordering: .relaxed).newValue <= 3 {
            FileHandle.standardError.write(
                Data("fleet: a simulated machine's statement failed: \(error.message)\n".utf8))
        }
    }

    private func pushQueued(now: Double, simulation: FleetSimulation) {
        let keys = pushes.withLock { keys in
            defer { keys.removeAll() }
            return keys
        }
        for (machine, key) in zip(machines, keys) {
            machine.pushed += 1
            let entry = SettingEntry(
                key: key, value: .integer(machine.pushed),
                version: SettingVersion(
                    timestamp: HybridTimestamp(
                        milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                    replica: machine.replica),
                sequence: machine.pushed)
            do { _ = try machine.hub.push([entry], from: machine.replica, through: machine.pushed) } catch {
                failed(error)
            }
            machine.schedule?.active()
            machine.sentStatements = true
            machine.due = now
        }
    }
}
