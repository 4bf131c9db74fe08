import Dispatch
import SettingsStore
import SettingsWire
import Synchronization

/// The engine behind a `ReplicaLink`: dials the socket, runs one `SyncSession` per connection,
/// and reconnects with backoff until stopped. Its handle stops it when released; the connection's
/// callbacks hold it weakly, so nothing but the handle keeps it running.
final class ReplicaDialer: Sendable {
    private struct State {
        var isStopped = false
        var connection: SocketConnection?
        var session: SyncSession?
        /// Set under the lock once the peer answered the hello; `session.peer` itself belongs to
        /// the session's queue and is never read from here.
        var isSynced = false
        var backoff = Backoff()
        /// The last failure logged at warning, so a retry loop logs it once.
        var loggedError: String?
    }

    /// How long the peer has to answer the hello.
    let handshakeTimeout: Duration
    /// The socket this link dials.
    /// What the link opens to reach the replica.
    let channel: any ReplicaChannel
    /// The channel's address, as `status` names the link.
    var address: String { channel.address }
    private let settings: Settings
    private let registry: PeerRegistry
    private let logger: SettingsLogger?
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "settingsd.replica-link")

    package init(
        settings: Settings, registry: PeerRegistry, channel: any ReplicaChannel, logger: SettingsLogger?,
        handshakeTimeout: Duration
    ) {
        self.settings = settings
        self.registry = registry
        self.channel = channel
        self.logger = logger
        self.handshakeTimeout = .milliseconds(handshakeTimeout.milliseconds(clampedTo: 10...3_600_000))
    }

    /// Whether a sync session is up now.
    var isConnected: Bool {
        state.withLock { $0.isSynced && $0.connection != nil }
    }

    /// Closes the connection and stops reconnecting.
    func stop() {
        let connection = state.withLock { state -> SocketConnection? in
            state.isStopped = true
            defer { state.connection = nil }
            return state.connection
        }
        registry.removeLink(address)
        connection?.queue.async { connection?.close() }
    }

    func start() {
        registry.updateLink(address) { $0.state = .connecting }
        queue.async { [weak self] in self?.attempt() }
    }

    private func attempt() {
        guard !state.withLock({ $0.isStopped }) else { return }
        registry.updateLink(address) { $0.state = .connecting }
        let fd: Int32
        do throws(SettingsError) {
            fd = try channel.open()
        } catch {
            retryLater(error)
            return
        }
        let connection = SocketConnection(
            fd: fd, label: "settingsd.replica", maximumFrameBytes: SyncSession.maximumFrameBytes,
            outboundLimit: 64 << 20)
        // The session runs on a queue of its own (`SessionQueues`), the socket on the connection's.
        let queues = SessionQueues(label: "settingsd.replica") { [weak connection] queues in
            connection?.queue.async { [weak connection] in
                if queues.allowsReading { connection?.resumeReading() }
            }
        }
        let fail: @Sendable (SettingsError) -> Void = { [weak connection] error in
            guard let connection else { return }
            connection.queue.async { connection.fail(error) }
        }
        let session = SyncSession(
            settings: settings, registry: registry, address: address, logger: logger,
            send: { [weak connection] message in
                guard let connection else { return }
                connection.queue.async { connection.send(writing: { message.write(to: &$0) }) }
            },
            execute: { task in queues.session.async(execute: task) },
            end: fail)
        var saidHello = false  // the first frame is the answer to this side's hello
        connection.onFrame = { [weak self, weak connection] frame in
            guard let connection else { return }
            let isAnswer = !saidHello
            saidHello = true
            let pause = queues.submit(bytes: frame.count) { [weak self] in
                let decoded = Result { () throws(SettingsError) -> LinkFrame in
                    isAnswer
                        ? .answer(try WireMessage.decode(JSONValue.parse(frame)))
                        : .message(try ReplicationMessage(frame: frame))
                }
                return { [weak self] in
                    guard let self, !session.isClosed else { return }
                    do throws(SettingsError) {
                        switch try decoded.get() {
                        case .answer(let answer): try handshake(session, answer: answer)
                        case .message(let message): try session.receive(message)
                        }
                    } catch {
                        fail(error)
                    }
                }
            }
            if pause { connection.pauseReading() }
        }
        connection.onClose = { [weak self] error in
            queues.session.async { session.close() }
            guard let self else { return }
            state.withLock { state in
                state.connection = nil
                state.session = nil
                state.isSynced = false
            }
            retryLater(
                error
                    ?? SettingsError(.connectionLost, "the replica at '\(address)' closed the connection"))
        }
        let stopped = state.withLock { state -> Bool in
            guard !state.isStopped else { return true }
            state.connection = connection
            state.session = session
            return false
        }
        guard !stopped else {
            connection.close()
            return
        }
        registry.updateLink(address) { $0.state = .handshaking }
        connection.start()
        queues.session.async {
            let hello = session.hello()
            connection.queue.async { connection.send(hello) }
        }
        // A peer that accepts and never answers (a wedged process, not a settingsd) fails the attempt.
        let timeout = SettingsError(
            .timeout,
            "the replica at '\(address)' did not answer the hello in \(handshakeTimeout.seconds) s")
        queues.session.asyncAfter(
            deadline: .now() + .nanoseconds(Int(handshakeTimeout.saturatingNanoseconds))
        ) {
            [weak session] in
            // Still no peer: the answer never came (the session belongs to this queue). Held
            // weakly: a link released meanwhile must not keep its store alive until then.
            guard let session, session.peer == nil else { return }
            fail(timeout)
        }
    }

    /// Reads the hello answer (`SyncSession.accept(response:)`); after a refusal saying this
    /// replica forked it has a new id, and reconnects at once.
    private func handshake(_ session: SyncSession, answer: WireMessage.Incoming) throws(SettingsError) {
        do throws(SettingsError) {
            try session.accept(response: answer)
        } catch {
            if case .response(_, .failure(let refusal)) = answer, refusal.code == .replicaForked {
                state.withLock { $0.backoff.retryAtOnce() }
            }
            throw error
        }
        let peer = session.peer
        let recovered = state.withLock { state -> Bool in
            state.backoff.reset()
            state.isSynced = true
            defer { state.loggedError = nil }
            return state.loggedError != nil
        }
        registry.updateLink(address) { status in
            status.state = .syncing
            status.peer = peer
            status.failures = 0
            status.lastError = nil
        }
        logger?.log(
            recovered ? .warning : .info,
            "syncing with \(peer?.description ?? "?") at \(address)\(recovered ? " again" : "")")
    }

    private func retryLater(_ error: SettingsError) {
        let retry = state.withLock { state -> (delay: Double, isNew: Bool)? in
            guard !state.isStopped else { return nil }
            let isNew = state.loggedError != error.message && error.code != .connectionLost
            if isNew { state.loggedError = error.message }
            return (state.backoff.next(), isNew)
        }
        guard let retry else { return }
        registry.updateLink(address) { status in
            status.state = .connecting
            status.failures += 1
            status.lastError = error.message
        }
        logger?.log(
            retry.isNew ? .warning : .debug,
            "replica link to \(address): \(error.message); retrying with backoff (now \(retry.delay) s)")
        queue.asyncAfter(deadline: .now() + retry.delay) { [weak self] in self?.attempt() }
    }
}

/// A frame from the peer, decoded off the connection's queue.
private enum LinkFrame {
    /// The answer to this side's hello.
    case answer(WireMessage.Incoming)
    /// Everything after it.
    case message(ReplicationMessage)
}
