import Dispatch
import SettingsStore
import SettingsWire
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The engine behind a `HubLink`: one thread that connects, pulls, pushes and waits, until
/// stopped. The replicator wakes it after every commit (`nudge()`); its handle stops it when
/// released.
final class HubConnector: Sendable {
    private struct State {
        var isStopped = false
        var status: HubStatus
        /// Local sequence numbers taken by entries that came from the hub: never pushed back.
        var fromHub: [ClosedRange<Int64>] = []
        /// The last failure logged at warning, so a retry loop logs it once.
        var loggedError: String?
        /// The local sequence number at the last comparison that found the digests equal.
        var agreedAtSequence: Int64?
        /// Asked to compare again (`verify()`): how many times, and how many comparisons
        /// started since; `checking` until one starts after the last ask.
        var verifyRequests = 0
        var verifyRequestsServed = 0
        /// Statements sent on connections closed since the link started.
        var closedStatements = 0
        /// Set once entries stamped far ahead were logged.
        var warnedAhead = false
        /// The namespace the link holds the store to (`Settings.enterAccount`), once entered.
        var enteredNamespace: String?
    }

    /// How long the link waits for a notification before catching up anyway, in seconds, and
    /// the longest between comparisons of digests.
    static let safetyNetInterval = 30.0

    /// Where the link syncs.
    let configuration: HubConfiguration
    /// `configuration.url` without settingsd's own options, for libpq.
    private let conninfo: String
    private let pooling: HubPooling
    private let pollInterval: ClosedRange<Double>
    private let pollBudget: Double
    let settings: Settings
    let logger: SettingsLogger?
    private let state: Mutex<State>
    private let wake: WakePipe
    private let finished = DispatchSemaphore(value: 0)

    package init(settings: Settings, configuration: HubConfiguration, logger: SettingsLogger?)
        throws(SettingsError)
    {
        let url = HubURL(configuration.url)
        conninfo = try url.checkedConninfo()
        pooling = try url.pooling(default: configuration.pooling)
        pollInterval = try url.pollInterval(default: configuration.pollInterval)
        pollBudget = try url.pollBudget(default: configuration.pollBudget)
        self.settings = settings
        self.configuration = configuration
        self.logger = logger
        self.wake = try WakePipe()
        let address = PostgresConnectionString.redacted(conninfo)
        state = Mutex(State(status: HubStatus(address: address, namespace: configuration.namespace)))
    }

    /// The link's state now.
    var status: HubStatus {
        let sequence = settings.sequence
        return state.withLock { state in
            var status = state.status
            let fromHub = state.fromHub.reduce(Int64(0)) { total, range in
                total
                    + Int64(
                        range.clamped(
                            to: (status.pushedThrough + 1)...max(sequence, status.pushedThrough + 1)
                        ).count)
            }
            status.pendingUp = max(0, sequence - status.pushedThrough - fromHub)
            if status.agreement.hasPrefix("agreed"),
                state.agreedAtSequence != sequence || state.verifyRequestsServed < state.verifyRequests
            {
                status.agreement = "checking"
            }
            return status
        }
    }

    /// Stops syncing and closes the connection (waiting up to five seconds for a statement in
    /// flight).
    func stop() {
        guard signalStop() else { return }
        _ = finished.wait(timeout: .now() + 5)
    }

    /// Asks the link's thread to end, and returns at once: what a released link does, since the
    /// thread that releases it may be one that must not wait (an event loop, a main actor).
    /// Returns whether the link was running.
    @discardableResult
    func signalStop() -> Bool {
        let (wasRunning, entered) = state.withLock { state -> (Bool, String?) in
            defer {
                state.isStopped = true
                state.enteredNamespace = nil
            }
            return (!state.isStopped, state.isStopped ? nil : state.enteredNamespace)
        }
        guard wasRunning else { return false }
        if entered != nil { settings.releaseAccount() }
        wake.signal()
        return true
    }

    /// Whether `stop()` was called.
    var isStopped: Bool { state.withLock { $0.isStopped } }

    /// Enters the store's account for the namespace the URL names (an account change happens
    /// here, before the caller takes any write for the new account), then starts the link's
    /// thread.
    ///
    /// - Returns: What happened to the store's account; `unchanged` when the namespace is only
    ///   known once connected (a libpq service file names the role).
    func start() throws(SettingsError) -> AccountMeeting {
        var meeting = AccountMeeting.unchanged
        if let namespace = configuration.namespace ?? PostgresConnectionString.loginRole(conninfo) {
            meeting = try enter(namespace)
        }
        do throws(SettingsError) {
            try DetachedThread.start("hub link") { [self] in run() }
        } catch {
            stop()
            throw error
        }
        return meeting
    }

    /// The namespace the link holds the store to, once entered.
    var enteredNamespace: String? {
        state.withLock { $0.enteredNamespace }
    }

    /// Enters `namespace` as the store's account and logs an account change.
    func enter(_ namespace: String) throws(SettingsError) -> AccountMeeting {
        let previous = settings.account?.namespace
        let meeting = try settings.enterAccount(namespace)
        state.withLock { $0.enteredNamespace = namespace }
        if case .changed(_, let forgotten) = meeting {
            let message =
                "moved from hub namespace \(previous ?? "?") to \(namespace): an account change; the old account's \(forgotten) synced keys were cleared and the new namespace is pulled whole (keys of scope local stay; what is written from now on belongs to \(namespace))"
            logger?.log(.warning, message)
            update { $0.lastAccountChange = message }
        }
        return meeting
    }

    /// The store committed something: push it soon.
    func nudge() {
        wake.signal()
    }

    /// Compare digests again soon, whatever changed (see `Replicator.verifyHubs()`).
    func verify() {
        state.withLock { $0.verifyRequests += 1 }
        wake.signal()
    }

    private func run() {
        defer { finished.signal() }
        if let warning = PostgresConnectionString.transportWarning(conninfo) {
            logger?.log(.warning, warning)
        }
        var backoff = Backoff()
        // Outlives a connection: a fleet whose pooler restarts keeps the stretch it measured.
        var poll = PollSchedule(bounds: pollInterval, budget: pollBudget)
        while !isStopped {
            do throws(SettingsError) {
                let (connection, polls) = try connect()
                connection.stallTimeout = configuration.stallTimeout
                // A session of its own: each statement is parsed and planned once, not per round
                // (a change costs every listening machine a pull, and a pull is a large statement).
                connection.preparesStatements = !polls
                defer { state.withLock { $0.closedStatements += connection.statementCount } }
                poll.active()
                try session(on: connection, polls: polls, poll: &poll) { backoff.reset() }
            } catch {
                failed(error)
                if error.code == .replicaForked { backoff.retryAtOnce() }
                wake.wait(seconds: backoff.next())
            }
        }
        update { $0.isConnected = false }
    }

    /// libpq options the link sets unless the URL does: a bounded connect and a dead peer
    /// noticed within 30 seconds, so a hub failing over is retried instead of waited on.
    private static let defaults = [
        "connect_timeout": "10", "application_name": "settingsd", "keepalives": "1",
        "keepalives_idle": "10", "tcp_user_timeout": "30000",
        // Never plaintext by default over TCP (libpq's own default, `prefer`, falls back to it when
        // a machine in the middle refuses TLS); libpq uses no TLS on Unix sockets anyway.
        "sslmode": "require",
        // A statement that waits on another session's lock (a tenant holding `LOCK TABLE`, a
        // counter row held `FOR UPDATE`) fails in time and the link retries, showing why.
        "options":
            "-c lock_timeout=\(lockTimeoutMilliseconds) -c statement_timeout=60000 -c idle_in_transaction_session_timeout=60000",
    ]

    /// Connects, and finds out whether to poll: the configuration says so, or a pooler stands in
    /// between (with `auto`).
    private func connect() throws(SettingsError) -> (connection: PostgresConnection, polls: Bool) {
        var defaults = Self.defaults
        // Session settings would stay on whichever server connection took them.
        if pooling == .transaction { defaults["options"] = nil }
        do {
            let connection = try PostgresConnection(conninfo: conninfo, defaults: defaults)
            switch pooling {
            case .transaction: return (connection, true)
            case .session: return (connection, false)
            case .auto: return (connection, try connection.isPooled())
            }
        } catch  where defaults["options"] != nil && error.message.contains("unsupported startup parameter") {
            // PgBouncer refuses `options` unless told to ignore it: a pooler. The stall timeout
            // still bounds every statement; the pooler's own `query_timeout` may too.
            defaults["options"] = nil
            let connection = try PostgresConnection(conninfo: conninfo, defaults: defaults)
            return (connection, pooling != .session)
        }
    }

    /// The most local sequence numbers, all of entries from the hub, pushed without recording
    /// the position on the hub.
    static let unrecordedLimit: Int64 = 1_000

    /// How long a hub statement waits for a lock another session holds.
    static let lockTimeoutMilliseconds = 5_000
    /// The least time between rounds that notifications alone cause: a flood of NOTIFY costs at
    /// most one round per interval.
    static let notificationInterval = 0.05

    /// One connection's life: check the schema, meet the namespace, then sync until stopped,
    /// waiting for notifications between rounds or, when `polls`, polling the counter.
    private func session(
        on connection: PostgresConnection, polls: Bool, poll: inout PollSchedule, connected: () -> Void
    ) throws(SettingsError) {
        try HubSchema.check(connection)
        let hub = try HubNamespace(
            connection: connection, namespace: configuration.namespace, listens: !polls)
        try measureClock(on: connection)
        let localID = settings.replicaID
        let incarnation = settings.lineage.current.id
        guard settings.replicaID == localID else {
            throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
        }
        try settleAccount(on: hub)
        var pushed = try continuedPosition(on: hub, as: localID)
        var cursor = settings.receivedSequence(from: hub.peerID)
        let initialTarget = cursor == nil ? try hub.lastSequence() : nil
        var isFirstRound = true
        var checks = CheckSchedule(
            safetyNet: .milliseconds(
                Int64((polls ? configuration.comparisonInterval : Self.safetyNetInterval) * 1000)),
            comparesAfterChanges: !polls)
        var retriedBehind = false
        // Per connection: a snapshot says nothing of another server a reconnect may reach.
        var quiet = HubQuietCheck()
        while !isStopped {
            let roundStarted = Deadline.now
            guard settings.replicaID == localID else {
                throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
            }
            let before = (cursor, pushed)
            let pulled = try pullAll(
                from: hub, after: cursor, as: localID, initialTarget: initialTarget, entropy: &checks.entropy)
            cursor = pulled.cursor
            (pushed, cursor) = try pushAll(
                to: hub, after: pushed, as: localID, incarnation: incarnation, cursor: cursor)
            // A round that pushed nothing knows the counter from its last pull's snapshot: on a
            // fleet, asking again would cost every machine a statement more per change. A push
            // landing since is the next poll's, as it would be a moment after this look.
            let counter: Int64
            if pushed == before.1, let seen = pulled.counter {
                counter = seen
            } else {
                counter = try hub.lastSequence()
            }
            if let current = cursor, counter < current {
                // Numbers at or below the cursor are being handed out again: pull from the counter
                // on, and let anti-entropy find what the hub lost or renumbered.
                let message =
                    "the hub's counter for namespace \(hub.name) is \(counter), below this replica's cursor \(current): the hub was restored from a backup, failed over or reset; comparing and repairing"
                logger?.log(.warning, message)
                update { $0.lastRewind = message }
                try settings.rewindCursor(of: hub.peerID, to: counter)
                cursor = counter
                checks.isForced = true
            }
            let behind = counter - (cursor ?? 0)
            let asked = state.withLock { $0.verifyRequests }
            if asked > checks.verifyRequestsSeen {
                checks.verifyRequestsSeen = asked
                checks.isForced = true
            }
            let isQuiet = before == (cursor, pushed) && behind <= 0
            if isQuiet, hub.recordLags(localID, behind: pushed) {
                // Record how far pushing got (rounds that had only the hub's own entries to push
                // skipped it).
                try hub.push([], from: localID, through: pushed, incarnation: incarnation)
            }
            if isQuiet, checks.isDue(sequence: settings.sequence, counter: counter) {
                try check(
                    hub, schedule: &checks, quiet: &quiet, as: localID, incarnation: incarnation,
                    pushed: pushed, counter: counter, cursor: cursor ?? 0)
            }
            update { status in
                status.isConnected = true
                status.namespace = hub.name
                status.lastError = nil
                status.lastContactMilliseconds = settings.configuration.clock()
                status.pushedThrough = pushed
                status.pendingDown = max(0, behind)
                status.mode = polls ? "poll" : "listen"
                status.pollSeconds = polls ? poll.interval : 0
            }
            count(connection)
            if isFirstRound {
                // Connected and through one round both ways: only now is a failure over.
                isFirstRound = false
                connected()
                let recovered = state.withLock { state -> Bool in
                    defer { state.loggedError = nil }
                    return state.loggedError != nil
                }
                logger?.log(
                    recovered ? .warning : .info,
                    "syncing with the hub \(connection.displayName), namespace \(hub.name)\(recovered ? " again" : "")"
                )
            }
            if polls {
                let progressed = before != (cursor, pushed)
                if pushed != before.1 {
                    poll.active()
                } else if cursor != before.0 {
                    poll.heard()
                }
                // Pushes that landed during the round: another round takes them now (one more
                // even when this one found nothing, for a push that landed between its pull and
                // its look at the counter; a cursor that cannot reach the counter waits).
                if behind > 0, progressed || !retriedBehind {
                    retriedBehind = !progressed
                    continue
                }
                retriedBehind = false
                try waitForChange(on: hub, from: counter, poll: &poll, checks: &checks, quiet: &quiet)
                continue
            }
            // Notifications that arrived during the statements above wait in libpq, not on the
            // socket: look there first, or the next change would wait for the safety net.
            let checkIn = checks.timeUntilDue(sequence: settings.sequence, counter: counter)?.seconds
            if try !connection.notifications().isEmpty
                || wake.wait(
                    for: connection.socket, seconds: min(Self.safetyNetInterval, checkIn ?? .infinity))
            {
                try coalesceNotifications(on: connection, roundStarted: roundStarted)
            }
        }
    }

    /// Polls the namespace's counter until it moves from `counter`, the store commits something
    /// to push, `verify()` is called, a comparison is due, or the link stops. A quiet poll is one
    /// index probe, or on a quiet hub a look at the server's snapshot alone (`HubQuietCheck`),
    /// which reads the counter too when the snapshot moved. The store's commit of what the link
    /// itself pulled wakes it too, and is slept through: on a fleet, that round would cost every
    /// machine two statements more per change. A routine comparison falls due without a round
    /// while the looks vouch that the hub finished no transaction since the last one agreed: on
    /// a quiet fleet of 10,000 machines, those rounds (a pull and the digest, some 0.7 ms of
    /// PostgreSQL's CPU each, 33 a second) would cost about 2 % of a core.
    private func waitForChange(
        on hub: HubNamespace, from counter: Int64, poll: inout PollSchedule, checks: inout CheckSchedule,
        quiet: inout HubQuietCheck
    ) throws(SettingsError) {
        while !isStopped {
            let checkIn =
                checks.timeUntilDue(sequence: settings.sequence, counter: counter)?.seconds ?? .infinity
            if checkIn == 0 {
                guard quiet.vouchesForAgreement, checks.renewWithoutComparing(sequence: settings.sequence)
                else { return }
                update { $0.comparisonsSpared += 1 }
                continue
            }
            if wake.wait(seconds: min(poll.nextWait(), checkIn)) {
                let asked = state.withLock { $0.verifyRequests } > checks.verifyRequestsSeen
                if isStopped || asked || status.pendingUp > 0 { return }
                continue
            }
            let polled = try pollCounter(on: hub, schedule: &poll, quiet: &quiet)
            update { status in
                status.lastContactMilliseconds = settings.configuration.clock()
                status.polls += 1
                if polled.checkedQuietly { status.quietChecks += 1 }
            }
            count(hub.connection)
            // Moved: the round that follows pulls, and says how fast to poll next.
            guard polled.counter == counter else { return }
            poll.quiet(checkedBy: polled.quietCheck)
            update { $0.pollSeconds = poll.interval }
        }
    }

    /// One quiet poll: the counter, and on every few the hub's load too (`PollSchedule.readsLoad`),
    /// whose rate may stretch the longest interval. A role that may not read the statistics
    /// polls within the configured bounds from then on.
    private func pollCounter(
        on hub: HubNamespace, schedule: inout PollSchedule, quiet: inout HubQuietCheck
    ) throws(SettingsError) -> HubNamespace.Poll {
        let wasAvailable = quiet.isAvailable
        defer {
            if wasAvailable && !quiet.isAvailable {
                logger?.log(
                    .warning,
                    "the hub refuses txid_current_snapshot() or pg_postmaster_start_time() to this role: every poll reads the namespace's counter"
                )
            }
        }
        guard schedule.readsLoad else { return try hub.poll(readingLoad: false, quiet: &quiet) }
        let result: HubNamespace.Poll
        do {
            result = try hub.poll(readingLoad: true, quiet: &quiet)
        } catch {
            guard error.code == .accessDenied else { throw error }
            logger?.log(
                .warning,
                "the hub's statistics cannot be read (\(error.message)): polling at most every \(schedule.bounds.upperBound) s whatever the hub's load"
            )
            schedule.stopReadingLoad()
            return try hub.poll(readingLoad: false, quiet: &quiet)
        }
        guard let transactions = result.transactions else {
            schedule.stopReadingLoad()
            return result
        }
        let before = schedule.longest
        schedule.measured(transactions: transactions, at: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
        if let rate = schedule.hubRate, abs(schedule.longest - before) > before / 4 {
            logger?.log(
                .info,
                "the hub's database runs \(Int(rate.rounded())) transactions a second (poll budget \(Int(pollBudget))): polling at most every \(Int(schedule.longest.rounded(.up))) s"
            )
        }
        return result
    }

    /// After a notification: waits until `notificationInterval` has passed since the round began
    /// (a local change still wakes it at once), then takes every notification waiting, so a burst
    /// of them, or a flood, costs one round.
    private func coalesceNotifications(on connection: PostgresConnection, roundStarted: Deadline)
        throws(SettingsError)
    {
        let elapsed = (Deadline.now - roundStarted).seconds
        if elapsed < Self.notificationInterval { wake.wait(seconds: Self.notificationInterval - elapsed) }
        _ = try connection.notifications()
    }

    /// Shows everything through `pushed` as pushed, and forgets the hub's entries below it.
    func markPushed(through pushed: Int64) {
        state.withLock { state in
            state.fromHub.removeAll { $0.upperBound <= pushed }
            state.status.pushedThrough = pushed
        }
    }

    /// One comparison with the hub, and what it leaves in the status and the schedule.
    private func check(
        _ hub: HubNamespace, schedule: inout CheckSchedule, quiet: inout HubQuietCheck, as replica: ReplicaID,
        incarnation: UUID, pushed: Int64, counter: Int64, cursor: Int64
    ) throws(SettingsError) {
        let started = Deadline.now
        let sequence = settings.sequence
        let serving = schedule.verifyRequestsSeen
        let outcome = try compare(
            with: hub, entropy: &schedule.entropy, as: replica, incarnation: incarnation, pushed: pushed,
            cursor: cursor)
        let agreed = { if case .agreed = outcome { true } else { false } }()
        schedule.checked(
            sequence: sequence, counter: counter, took: Deadline.now - started,
            agreed: agreed)
        quiet.compared(agreed: agreed)
        state.withLock { state in
            state.status.comparisons += 1
            switch outcome {
            case .agreed(let refused):
                state.status.agreement = refused == 0 ? "agreed" : "agreed (\(refused) hub entries refused)"
                state.agreedAtSequence = sequence
                state.verifyRequestsServed = max(state.verifyRequestsServed, serving)
            case .diverged(let repaired):
                state.status.agreement = "diverged (\(repaired) keys)"
                state.status.repairedKeys += repaired
                state.agreedAtSequence = nil
            case .busy:
                state.status.agreement = "checking"
                state.agreedAtSequence = nil
            }
        }
    }

    /// Local sequence numbers taken by entries from the hub: never pushed back.
    func noteFromHub(_ sequences: ClosedRange<Int64>) {
        state.withLock { $0.fromHub.append(sequences) }
    }

    /// The local sequence numbers that entries from the hub took and that are not pushed yet.
    var sequencesFromHub: [ClosedRange<Int64>] {
        state.withLock { $0.fromHub }
    }

    /// Counts entries pulled from the hub stamped beyond this clock's bound; logs the first.
    func noteAhead(_ count: Int) {
        guard count > 0 else { return }
        let firstFrom = state.withLock { state -> String? in
            state.status.entriesAheadOfClock += count
            defer { state.warnedAhead = true }
            return state.warnedAhead ? nil : state.status.address
        }
        guard let address = firstFrom else { return }
        logger?.log(
            .warning,
            "the hub \(address) holds entries stamped more than \(settings.configuration.maximumClockSkewMilliseconds / 1000) s ahead of this clock (a machine whose clock is ahead, or forged rows); they are applied but do not move it, and later writes here still win"
        )
    }

    private func failed(_ error: SettingsError) {
        let isNew = state.withLock { state -> Bool in
            state.status.isConnected = false
            state.status.lastError = error.message
            defer { state.loggedError = error.message }
            return state.loggedError != error.message
        }
        logger?.log(isNew ? .warning : .debug, "hub link: \(error.message); retrying with backoff")
    }

    /// Shows the statements sent so far, `connection`'s included.
    private func count(_ connection: PostgresConnection) {
        state.withLock { $0.status.statements = $0.closedStatements + connection.statementCount }
    }

    /// Changes what `status` shows of the link.
    func update(_ change: (inout HubStatus) -> Void) {
        state.withLock { change(&$0.status) }
    }
}
