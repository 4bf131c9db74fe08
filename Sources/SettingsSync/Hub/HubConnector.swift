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
    struct State {
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
        /// Sealed rows refused so far (`SealRefusals.rows`), each counted once.
        var refusedRows: Set<String> = []
    }

    /// How long the link waits for a notification before catching up anyway, in seconds, and
    /// the longest between comparisons of digests.
    static let safetyNetInterval = 30.0

    /// Where the link syncs.
    let configuration: HubConfiguration
    /// `configuration.url` without settingsd's own options, for libpq.
    private let conninfo: String
    private let pooling: HubPooling
    private let pollInterval: ClosedRange<Duration>
    /// `?settingsd_seal=off`: the namespace stays plain even when this machine holds a key.
    let marksPlain: Bool
    let settings: Settings
    let logger: SettingsLogger?
    let state: Mutex<State>
    /// Wakes the link's thread: a commit to push, `verify()`, `stop()`.
    let wake: WakePipe
    private let finished = DispatchSemaphore(value: 0)

    package init(settings: Settings, configuration: HubConfiguration, logger: SettingsLogger?)
        throws(SettingsError)
    {
        let url = HubURL(configuration.url)
        conninfo = try url.checkedConninfo()
        pooling = try url.pooling(default: configuration.pooling)
        pollInterval = try url.pollInterval(default: configuration.pollInterval)
        marksPlain = try url.marksPlain()
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

    /// How many times `verify()` was called.
    var verifyRequests: Int { state.withLock { $0.verifyRequests } }

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
        applyRecordedPolicy()
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
        // Outlives a connection: a fleet whose pooler restarts keeps the plan it read.
        var poll = PollSchedule(bounds: pollInterval)
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
        let schemaVersion = try HubSchema.check(connection)
        var hub = try HubNamespace(
            connection: connection, namespace: configuration.namespace, listens: !polls)
        try measureClock(on: connection)
        let localID = settings.replicaID
        let incarnation = settings.lineage.current.id
        guard settings.replicaID == localID else {
            throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
        }
        try settleAccount(on: hub)
        for (replica, name) in try hub.exchangeNames(
            settings.replicaName, of: localID, schemaVersion: schemaVersion)
        where replica != localID {
            settings.setName(name, ofReplica: replica)
        }
        var policy = PolicyFollowing(isEnabled: schemaVersion >= HubSchema.policies.version)
        try followPolicy(on: hub, as: localID, following: &policy, always: true)
        var pushed = try continuedPosition(on: hub, as: localID)
        var cursor = settings.receivedSequence(from: hub.peerID)
        let initialTarget = cursor == nil ? try hub.lastSequence() : nil
        var isFirstRound = true
        var checks = CheckSchedule(
            safetyNet: polls ? configuration.comparisonInterval : .seconds(Self.safetyNetInterval),
            comparesAfterChanges: !polls)
        try joinSealing(
            on: &hub, as: localID, incarnation: incarnation, pushed: pushed, cursor: &cursor,
            initialTarget: initialTarget, entropy: &checks.entropy)
        var retriedBehind = false
        // Per connection: a reconnect may reach a server that numbers the function otherwise.
        var call = HubPollCall()
        // The hub's mark before the last comparison that agreed (polling links).
        var agreedMark: HubPollPlan.Mark?
        if polls { follow(try hub.pollPlan(for: localID), schedule: &poll) }
        while !isStopped {
            let roundStarted = Deadline.now
            guard settings.replicaID == localID else {
                throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
            }
            let before = (cursor, pushed)
            let pulled = try pullAll(
                from: hub, after: cursor, as: localID, initialTarget: initialTarget, entropy: &checks.entropy)
            cursor = pulled.cursor
            // A policy write moves the counter of every namespace it reaches: the mark is read
            // only when the cursor moved, so an idle link sends nothing more.
            try followPolicy(on: hub, as: localID, following: &policy, readsMark: cursor != before.0)
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
            let asked = verifyRequests
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
                // What moves no counter (a role granted or revoked, a machine that joined as a
                // policy was written) is found at the latest here.
                try followPolicy(on: hub, as: localID, following: &policy)
                // A polling link reads the plan before it compares: the mark it holds then vouches
                // for the agreement later, while the hub holds what it held.
                let mark = polls ? follow(try hub.pollPlan(for: localID), schedule: &poll).mark : nil
                if let mark, let agreedMark, mark.matches(agreedMark),
                    checks.renewWithoutComparing(sequence: settings.sequence)
                {
                    update { $0.comparisonsSpared += 1 }
                } else {
                    let agreed = try check(
                        hub, schedule: &checks, as: localID, incarnation: incarnation,
                        pushed: pushed, counter: counter, cursor: cursor ?? 0)
                    agreedMark = agreed ? mark : nil
                }
            }
            update { status in
                status.isConnected = true
                status.namespace = hub.name
                status.lastError = nil
                status.lastContactMilliseconds = settings.configuration.clock()
                status.pushedThrough = pushed
                status.pendingDown = max(0, behind)
                status.mode = polls ? "poll" : "listen"
                status.pollSeconds = polls ? poll.interval.seconds : 0
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
                try waitForChange(
                    on: hub, as: localID, from: counter, poll: &poll, checks: &checks, call: &call,
                    agreedMark: agreedMark)
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

    /// Shows everything through `pushed` as pushed, and forgets the hub's entries below it.
    func markPushed(through pushed: Int64) {
        state.withLock { state in
            state.fromHub.removeAll { $0.upperBound <= pushed }
            state.status.pushedThrough = pushed
        }
    }

    /// One comparison with the hub, and what it leaves in the status and the schedule; returns
    /// whether the two agreed.
    @discardableResult
    private func check(
        _ hub: HubNamespace, schedule: inout CheckSchedule, as replica: ReplicaID,
        incarnation: UUID, pushed: Int64, counter: Int64, cursor: Int64
    ) throws(SettingsError) -> Bool {
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
        return agreed
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
    func count(_ connection: PostgresConnection) {
        state.withLock { $0.status.statements = $0.closedStatements + connection.statementCount }
    }

    /// Changes what `status` shows of the link.
    func update(_ change: (inout HubStatus) -> Void) {
        state.withLock { change(&$0.status) }
    }
}
