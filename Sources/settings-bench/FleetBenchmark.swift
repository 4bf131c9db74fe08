import CLinux
import Foundation
import PostgresFixture
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settings-bench fleet`: N machines on one namespace of one PostgreSQL, through PgBouncer in
/// transaction pooling (the links poll), beside direct connections (the links listen) for the N
/// where those still fit in PostgreSQL's `max_connections`. The machines are simulated
/// (`FleetSimulation`: the link's statements and intervals, one connection each); ten real
/// daemons beside them measure a real link through the same pooler.
struct FleetBenchmark {
    let quick: Bool
    let binary: String

    /// `--machines N[,N…]`: the fleet sizes to measure (10, 100, 1,000 and 10,000 by default).
    private static let sizes = flagValue("--machines").map { $0.split(separator: ",").compactMap { Int($0) } }

    /// `--poll-max S`: the floor of the links' longest poll interval (`settingsd_poll_max`; 5 s
    /// by default).
    private static let pollInterval: ClosedRange<Duration> = {
        let interval = HubConfiguration.defaultPollInterval
        guard let most = flagValue("--poll-max").flatMap(Double.init), most.isFinite, most <= 3_600,
            Duration.milliseconds(Int64(most * 1_000)) >= interval.lowerBound
        else { return interval }
        return interval.lowerBound...Duration.milliseconds(Int64(most * 1_000))
    }()

    /// `--poll-rate N`: the hub's poll rate (`settingsd hub init --poll-rate`; 1,250 by
    /// default).
    private static let pollRate =
        flagValue("--poll-rate").flatMap { Int64($0) }.flatMap { HubPollPlan.rates.contains($0) ? $0 : nil }
        ?? HubPollPlan.defaultRate

    /// `--pool-size N`: PgBouncer's server connections per user and database (10 by default).
    private static let poolSize =
        flagValue("--pool-size").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 10

    /// The most connections the direct peer may take (the private cluster allows 200).
    private static let directLimit = 100

    func run() {
        // Every simulated machine's results pass through this one process. glibc gives a heap's
        // free top back to the kernel once it passes 128 KiB, so each 1,000-row result (about as
        // large) was paged in afresh: a third of the simulation's CPU in page faults, which a real
        // machine spends on its own processor. Freed memory stays for the next result instead.
        mallopt(M_TRIM_THRESHOLD, 256 << 20)
        mallopt(M_MMAP_THRESHOLD, 32 << 20)
        runSuite { scratch in
            let cluster = try PostgresCluster.shared()
            _ = try HubAdministration.initialize(url: cluster.conninfo(), pollRate: Self.pollRate)
            var report = Report(
                title: "fleet (a private PostgreSQL cluster, PgBouncer 1.x in transaction pooling)")
            let sizes = Self.sizes ?? (quick ? [10, 100, 1_000] : [10, 100, 1_000, 10_000])
            // A company has a role per person: the cluster holds as many roles as the largest
            // fleet has machines, so every statement pays what row-level security costs then.
            let people = sizes.max() ?? 0
            progress("creating \(people) roles, one per person")
            try cluster.psql(
                "DO $$ BEGIN FOR i IN 1..\(people) LOOP EXECUTE format('CREATE ROLE person_%s NOLOGIN', i); END LOOP; END $$"
            )
            for size in sizes {
                do {
                    try measure(machines: size, cluster: cluster, into: &report)
                } catch {
                    note("fleet: \(size) machines could not be measured: \(error)")
                }
            }
            try realDaemons(cluster: cluster, scratch: scratch, into: &report)
            report.print()
        }
    }

    /// One fleet size, pooled and (where it fits) direct.
    private func measure(machines: Int, cluster: PostgresCluster, into report: inout Report) throws {
        let role = try cluster.makeRole("fleet")
        let pooler = try PgBouncer(
            cluster: cluster, users: [role],
            settings: ["max_client_conn": String(machines + 200), "default_pool_size": String(Self.poolSize)])
        defer { pooler.stop() }
        let interval = Self.pollInterval
        progress(
            "\(machines) machines through PgBouncer: connecting (polls every \(interval.lowerBound.seconds)–\(interval.upperBound.seconds) s at least, the hub's poll rate \(Self.pollRate) a second)"
        )
        let pooled = try FleetRun(
            machines: machines, conninfo: pooler.conninfo(user: role.name, password: role.password),
            mode: .poll(interval), cluster: cluster, role: role, pooler: pooler.runningPID, quick: quick)
        if pooled.failures > 0 { progress("\(pooled.failures) statements failed (retried)") }
        var direct: FleetRun?
        if machines <= Self.directLimit {
            progress("\(machines) machines, direct connections: connecting")
            let role = try cluster.makeRole("fleet")
            direct = try FleetRun(
                machines: machines, conninfo: cluster.conninfo(user: role.name, password: role.password),
                mode: .listen, cluster: cluster, role: role, pooler: nil, quick: quick)
        }
        let peer = direct == nil ? "direct: over max_connections" : "direct (LISTEN)"
        let name = "\(machines) machines"
        report.quantity(
            "\(name): PostgreSQL server connections", Double(pooled.serverConnections), unit: "connections",
            format: "%.0f", peer: direct.map { Double($0.serverConnections) }, peerName: peer,
            target: machines == 10_000 ? .atMost(20, "<= 20") : .reported)
        report.quantity(
            "\(name): PostgreSQL CPU per idle machine per minute", pooled.cpuPerMachineMinute * 1000,
            unit: "ms",
            format: "%.2f ms", peer: direct.map { $0.cpuPerMachineMinute * 1000 }, peerName: peer,
            target: .reported)
        report.quantity(
            "\(name) idle: PostgreSQL CPU, share of one core", pooled.idleCoreShare * 100, unit: "%",
            format: "%.1f %%", peer: direct.map { $0.idleCoreShare * 100 }, peerName: peer,
            target: machines == 10_000 ? .atMost(10, "< 10 %") : .reported)
        report.quantity(
            "\(name) idle: PgBouncer CPU, share of one core", pooled.poolerCoreShare * 100, unit: "%",
            format: "%.1f %%", target: .reported)
        report.quantity(
            "\(name) idle: statements per second", pooled.idleStatementsPerSecond, unit: "stmt/s",
            format: "%.0f", peer: direct.map(\.idleStatementsPerSecond), peerName: peer, target: .reported)
        report.quantity(
            "\(name) idle: statements that were polls by fast-path call",
            pooled.idlePollCallShare * 100, unit: "%", format: "%.0f %%", target: .reported)
        report.quantity(
            "\(name) idle: comparisons of digests per second (a quiet hub's mark spares the rest)",
            pooled.idleComparisonsPerSecond, unit: "/s", format: "%.1f", target: .reported)
        let longest =
            pooled.longestIntervals.isEmpty ? [interval.upperBound.seconds] : pooled.longestIntervals
        let most = longest[longest.count - 1]
        report.intervals("\(name) idle: the links' longest poll interval", sorted: longest)
        report.latency(
            "\(name): set → applied on every machine (idle fleet)", sorted: pooled.propagation,
            peer: direct?.propagation, peerName: peer,
            target: .percentiles(p50: most, p99: most + 0.1))
        if !pooled.policyPropagation.isEmpty {
            report.latency(
                "\(name): policy revision → applied and reported on every machine (idle fleet)",
                sorted: pooled.policyPropagation, peer: direct?.policyPropagation, peerName: peer,
                target: .percentiles(p50: most, p99: most + 0.1))
        }
        if pooled.policyReached < machines {
            report.quantity(
                "\(name): machines that reported the policy revision in time", Double(pooled.policyReached),
                unit: "machines", format: "%.0f", target: .atLeast(Double(machines) * 0.99, ">= 99 %"))
        }
        report.seconds(
            "\(name): hub report over the fleet (\(pooled.reportApplied) applied)", pooled.reportSeconds,
            target: machines == 10_000 ? .atMost(1, "< 1 s") : .reported)
        report.quantity(
            "\(name) idle with the policy in force: statements per second",
            pooled.idleStatementsPerSecondWithPolicy, unit: "stmt/s", format: "%.0f",
            peer: pooled.idleStatementsPerSecond, peerName: "idle before the policy", target: .reported)
        report.seconds(
            "\(name): \(min(machines, 1_000)) writers at once → the hub numbered every write",
            pooled.burstPushedSeconds, target: .reported)
        report.quantity(
            "\(name): statements the machines sent during that burst", Double(pooled.burstStatements),
            unit: "statements", format: "%.0f", target: .reported)
        report.seconds(
            "\(name): PostgreSQL CPU during that burst", pooled.burstServerSeconds, target: .reported)
        report.seconds(
            "\(name): PgBouncer CPU during that burst", pooled.burstPoolerSeconds, target: .reported)
        report.seconds(
            "\(name): the simulated machines' CPU during that burst", pooled.burstSimulationSeconds,
            target: .reported)
        report.intervals(
            "\(name): the links' longest poll interval as the burst began",
            sorted: pooled.burstLongestIntervals)
        if pooled.burstSeconds.isFinite {
            report.seconds(
                "\(name): \(min(machines, 1_000)) writers at once → every machine has every write",
                pooled.burstSeconds, target: .atMost(10, "< 10 s"))
        } else {
            report.quantity(
                "\(name): \(min(machines, 1_000)) writers at once → machines with every write after 300 s",
                Double(pooled.burstReached), unit: "machines", format: "%.0f",
                target: .atLeast(Double(machines), "all in < 10 s"))
        }
    }

    /// Ten real daemons through one pooler: a set on one → `get` answers it on each of the others.
    private func realDaemons(cluster: PostgresCluster, scratch: Scratch, into report: inout Report) throws {
        let role = try cluster.makeRole("fleetd")
        let pooler = try PgBouncer(cluster: cluster, users: [role])
        defer { pooler.stop() }
        // The daemons poll as the simulated machines do: `--poll-max` reaches them through the
        // hub URL, as an operator would set it.
        let url = pooler.conninfo(
            user: role.name, password: role.password,
            extra: "settingsd_poll_max=\(Self.pollInterval.upperBound.seconds)")
        progress("10 real daemons through PgBouncer")
        let daemons = try (0..<10).map { index in
            try BenchDaemon(
                binary: binary, scratch: scratch, name: "fleet\(index)", hub: url)
        }
        defer {
            for daemon in daemons {
                daemon.process.terminate()
                daemon.process.waitUntilExit()
            }
        }
        let clients = try daemons.map { try BlockingClient(socketPath: $0.socket) }
        var samples: [Double] = []
        // Idle first: every link at its longest interval, as a quiet fleet is (from the least,
        // the doubling waits add up to about twice the most).
        let idle = quick ? 2 : max(12, 2.5 * Self.pollInterval.upperBound.seconds)
        for trial in 0..<(quick ? 3 : 10) {
            Thread.sleep(forTimeInterval: idle)
            let started = FleetSimulation.now()
            try clients[0].request(.set(key: "fleet.trial", value: .integer(Int64(trial))))
            var pending = Set(1..<daemons.count)
            while !pending.isEmpty, FleetSimulation.now() - started < 30 {
                for index in pending {
                    if (try? clients[index].request(.get(key: "fleet.trial")))?["value"]
                        == .integer(Int64(trial))
                    {
                        pending.remove(index)
                        samples.append(FleetSimulation.now() - started)
                    }
                }
                usleep(2_000)
            }
        }
        let interval = Self.pollInterval
        report.latency(
            "10 real daemons: set → get on each other (idle fleet)", sorted: samples.sorted(),
            target: .percentiles(p50: interval.upperBound.seconds, p99: interval.upperBound.seconds + 0.1))
    }

}

extension Report {
    /// Reports links' longest poll intervals, `sorted`: their median, the most in the name;
    /// nothing when there are none.
    fileprivate mutating func intervals(_ name: String, sorted: [Double]) {
        guard let most = sorted.last else { return }
        quantity(
            "\(name), median (most \(String(format: "%.1f", most)) s)", sorted[sorted.count / 2], unit: "s",
            format: "%.1f s", target: .reported)
    }
}

/// A line on standard error saying what the fleet benchmark is doing (a run takes minutes).
private func progress(_ message: String) {
    FileHandle.standardError.write(Data("fleet: \(message)\n".utf8))
}

/// One fleet, measured: connected, settled, idle for a while, then propagation and a burst.
private struct FleetRun {
    var serverConnections = 0
    var cpuPerMachineMinute = 0.0
    var idleCoreShare = 0.0
    var poolerCoreShare = 0.0
    var idleStatementsPerSecond = 0.0
    /// Of the idle statements, the share that were polls by fast-path call (`HubPollCall`).
    var idlePollCallShare = 0.0
    /// Comparisons of digests a second while idle (the rest spared: `HubPollPlan.Mark`).
    var idleComparisonsPerSecond = 0.0
    var propagation: [Double] = []
    var burstSeconds = 0.0
    /// From the burst's start until the hub had numbered every one of its writes.
    var burstPushedSeconds = 0.0
    /// Statements the machines sent during the burst.
    var burstStatements = 0
    /// PostgreSQL's CPU seconds from the burst's start until every machine had every write.
    var burstServerSeconds = 0.0
    /// PgBouncer's CPU seconds over the same time.
    var burstPoolerSeconds = 0.0
    /// This process's CPU seconds over the same time: the simulated machines' statements, their
    /// rows decoded (what each machine's own processor does in a real fleet).
    var burstSimulationSeconds = 0.0
    /// Machines that had every write of the burst when it was measured.
    var burstReached = 0
    var failures = 0
    /// Each polling machine's longest interval once the fleet measured the hub's load, sorted.
    var longestIntervals: [Double] = []
    /// The links' longest intervals as the burst began, sorted.
    var burstLongestIntervals: [Double] = []
    /// From a policy revision's write to each machine's report of it, sorted.
    var policyPropagation: [Double] = []
    /// Machines that reported the revision within the wait.
    var policyReached = 0
    /// `hub report` of that policy over the fleet: its seconds, and the machines it found applied.
    var reportSeconds = 0.0
    var reportApplied = 0
    /// Statements a second while idle with the policy in force (the same window as `idle…`).
    var idleStatementsPerSecondWithPolicy = 0.0

    init(
        machines: Int, conninfo: String, mode: FleetSimulation.Mode, cluster: PostgresCluster,
        role account: (name: String, password: String), pooler: Int32?, quick: Bool
    ) throws {
        let role = account.name
        let simulation = try FleetSimulation(count: machines, conninfo: conninfo, mode: mode)
        defer { simulation.stop() }
        let admin = try PostgresConnection(conninfo: cluster.conninfo())
        let writer = try HubNamespace(
            connection: PostgresConnection(
                conninfo: cluster.conninfo(user: role, password: account.password)),
            namespace: role, listens: false)
        try waitUntilQuiet(simulation)
        if case .poll = mode, !quick {
            // Each machine reads the poll plan as it connects (when the hub has counted only the
            // machines before it) and again at each routine comparison; the fleet is settled
            // once every machine's plan counts them all and each has compared once.
            progress("\(machines) machines: waiting until each plans for the whole fleet and has compared")
            try Self.waitForPlans(simulation, timeout: 900)
            try waitUntilQuiet(simulation)
        }
        longestIntervals = simulation.longestIntervals
        // Idle: every machine at its longest interval.
        let window = quick ? 5.0 : 20.0
        progress("\(machines) machines settled; idle for \(Int(window)) s")
        let postgres = try ProcessCPU.postgres(cluster: cluster)
        let poolerCPU = pooler.map { ProcessCPU(pids: [$0]) }
        let (cpuBefore, poolerBefore, statementsBefore, callsBefore, comparisonsBefore) = (
            postgres.seconds, poolerCPU?.seconds ?? 0, simulation.statements, simulation.pollCalls,
            simulation.comparisons
        )
        var connections = 0
        let end = FleetSimulation.now() + window
        while FleetSimulation.now() < end {
            connections = max(connections, try Self.serverConnections(admin, role: role))
            Thread.sleep(forTimeInterval: 0.5)
        }
        let cpu = postgres.seconds - cpuBefore
        idleCoreShare = cpu / window
        poolerCoreShare = ((poolerCPU?.seconds ?? 0) - poolerBefore) / window
        cpuPerMachineMinute = cpu / Double(machines) / (window / 60)
        idleStatementsPerSecond = Double(simulation.statements - statementsBefore) / window
        idlePollCallShare =
            Double(simulation.pollCalls - callsBefore)
            / Double(max(1, simulation.statements - statementsBefore))
        idleComparisonsPerSecond = Double(simulation.comparisons - comparisonsBefore) / window

        for trial in 0..<(quick ? 2 : 3) {
            let version = SettingVersion(
                timestamp: HybridTimestamp(
                    milliseconds: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0),
                replica: .random())
            let entry = SettingEntry(
                key: "fleet.trial", value: .integer(Int64(trial)), version: version,
                sequence: Int64(trial + 1))
            // Nobody else writes to the namespace: the push takes the counter's next number.
            simulation.expect(try writer.lastSequence() + 1)
            try writer.push([entry], from: version.replica, through: Int64(trial + 1))
            try Self.waitFor(simulation, machines: machines, timeout: 30 + 2 * (longestIntervals.last ?? 0))
            propagation += simulation.arrivals
            connections = max(connections, try Self.serverConnections(admin, role: role))
            try waitUntilQuiet(simulation)
        }
        propagation.sort()
        try measurePolicy(
            simulation, machines: machines, cluster: cluster, role: role, window: window,
            timeout: 30 + 2 * (longestIntervals.last ?? 0))

        let writers = min(machines, 1_000)
        // The fleet's pulls of the single changes may have stretched some links' intervals.
        burstLongestIntervals = simulation.longestIntervals
        progress("\(machines) machines: \(writers) writers at once")
        let goal = try writer.lastSequence() + Int64(writers)
        simulation.expect(goal)
        let this = ProcessCPU(pids: [getpid()])
        let (started, statementsAtBurst, cpuAtBurst) = (
            FleetSimulation.now(), simulation.statements, postgres.seconds
        )
        let (poolerAtBurst, thisAtBurst) = (poolerCPU?.seconds ?? 0, this.seconds)
        simulation.burst(machines: writers, tag: "burst")
        let deadline = started + 300
        while simulation.arrivals.count < machines, FleetSimulation.now() < deadline {
            connections = max(connections, try Self.serverConnections(admin, role: role))
            if burstPushedSeconds == 0, try writer.lastSequence() >= goal {
                burstPushedSeconds = FleetSimulation.now() - started
            }
            usleep(20_000)
        }
        burstSeconds = simulation.arrivals.count < machines ? .infinity : FleetSimulation.now() - started
        burstStatements = simulation.statements - statementsAtBurst
        burstServerSeconds = postgres.seconds - cpuAtBurst
        burstPoolerSeconds = (poolerCPU?.seconds ?? 0) - poolerAtBurst
        burstSimulationSeconds = this.seconds - thisAtBurst
        burstReached = simulation.arrivals.count
        serverConnections = max(connections, try Self.serverConnections(admin, role: role))
        failures = simulation.failures
    }

    /// A policy for the fleet's role, written by the hub's owner: when each machine applied and
    /// reported it, how long `hub report` takes over the fleet, and the idle statements after.
    private mutating func measurePolicy(
        _ simulation: FleetSimulation, machines: Int, cluster: PostgresCluster, role: String, window: Double,
        timeout: Double
    ) throws {
        progress("\(machines) machines: a policy revision for the fleet")
        let name = "fleet-\(role)"
        let document = PolicyDocument(
            keys: [
                "ui.theme": .init(value: "dark", level: .mandatory),
                "ui.font": .init(value: "Inter", level: .recommended),
            ])
        let plan = try HubPolicyAdministration.set(
            url: cluster.conninfo(), name: name, document: document, targets: [role], dryRun: true)
        simulation.expectPolicy(name, revision: plan.revision)
        _ = try HubPolicyAdministration.set(
            url: cluster.conninfo(), name: name, document: document, targets: [role], dryRun: false)
        let deadline = FleetSimulation.now() + timeout
        while simulation.policyArrivals.count < machines, FleetSimulation.now() < deadline { usleep(20_000) }
        policyPropagation = simulation.policyArrivals.sorted()
        policyReached = policyPropagation.count
        let started = FleetSimulation.now()
        let report = try HubPolicyReport.make(
            url: cluster.conninfo(), policy: name, unseenAfter: .seconds(86_400))
        reportSeconds = FleetSimulation.now() - started
        reportApplied = report.summaries.first?.count(.applied) ?? 0
        try waitUntilQuiet(simulation)
        let before = simulation.statements
        Thread.sleep(forTimeInterval: window)
        idleStatementsPerSecondWithPolicy = Double(simulation.statements - before) / window
    }

    private static func waitForPlans(_ simulation: FleetSimulation, timeout: Double) throws {
        let deadline = FleetSimulation.now() + timeout
        let fleet = Int64(simulation.count)
        while simulation.machines(planningFor: fleet) < simulation.count
            || simulation.agreedMachines < simulation.count
        {
            guard FleetSimulation.now() < deadline else {
                throw SettingsError(
                    .timeout,
                    "fleet: in \(Int(timeout)) s, \(simulation.machines(planningFor: fleet)) of \(simulation.count) machines planned for the whole fleet and \(simulation.agreedMachines) compared"
                )
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    private func waitUntilQuiet(_ simulation: FleetSimulation) throws {
        let deadline = FleetSimulation.now() + 120
        while simulation.quietMachines < simulation.count {
            guard FleetSimulation.now() < deadline else {
                let intervals = simulation.longestIntervals
                throw SettingsError(
                    .timeout,
                    "fleet: the machines did not settle in 120 s: \(simulation.quietMachines) of \(simulation.count) at their longest interval (\(intervals.first ?? 0)…\(intervals.last ?? 0) s), \(simulation.failures) failures; \(simulation.unsettled)"
                )
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    private static func waitFor(_ simulation: FleetSimulation, machines: Int, timeout: Double) throws {
        let deadline = FleetSimulation.now() + timeout
        while simulation.arrivals.count < machines {
            guard FleetSimulation.now() < deadline else {
                throw SettingsError(
                    .timeout,
                    "fleet: \(simulation.arrivals.count) of \(machines) machines got the change in \(timeout) s; behind: \(simulation.laggards)"
                )
            }
            usleep(5_000)
        }
    }

    private static func serverConnections(_ admin: PostgresConnection, role: String) throws -> Int {
        let rows = try admin.execute(
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE usename = $1", [.text(role)])
        return Int(rows.int64(0, 0))
    }
}

/// The CPU time of a set of processes (user and system), from `/proc`.
private struct ProcessCPU {
    let pids: [Int32]

    /// The postmaster of `cluster` and every process it started.
    static func postgres(cluster: PostgresCluster) throws -> ProcessCPU {
        let text = try String(contentsOfFile: "\(cluster.folder)/data/postmaster.pid", encoding: .utf8)
        guard let line = text.split(separator: "\n").first, let postmaster = Int32(line) else {
            throw SettingsError(.io, "fleet: no postmaster.pid in \(cluster.folder)/data")
        }
        return ProcessCPU(pids: [postmaster], childrenOf: postmaster)
    }

    init(pids: [Int32], childrenOf parent: Int32? = nil) {
        self.pids = pids
        self.parent = parent
    }

    private let parent: Int32?

    /// Seconds of CPU so far; children of the parent are looked up anew each time.
    var seconds: Double {
        var all = pids
        if let parent {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            all += entries.compactMap(Int32.init).filter { Self.stat($0)?.parent == parent }
        }
        let ticks = all.compactMap { Self.stat($0)?.ticks }.reduce(0, +)
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The parent and the CPU ticks of `pid` and of its reaped children (fields 4 and 14 to 17
    /// of its stat).
    private static func stat(_ pid: Int32) -> (parent: Int32, ticks: Int)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
            let text = String(data: data, encoding: .utf8), let end = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: end)...].split(separator: " ")
        // utime, stime, cutime, cstime: the postmaster's children that exited count in its own.
        guard fields.count > 14, let parent = Int32(fields[1]) else { return nil }
        return (parent, fields[11...14].compactMap { Int($0) }.reduce(0, +))
    }
}
