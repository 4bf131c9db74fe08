import Dispatch
import Synchronization

/// Keeps a store in sync with the replica at a socket (a daemon, usually), reconnecting with
/// backoff whenever the connection breaks, until stopped.
///
/// ```swift
/// let link = settings.sync(with: SettingsPaths.socket)   // works offline, converges when reachable
/// // ...
/// link.stop()
/// ```
public final class ReplicaLink: Sendable {
    private struct State {
        var isStopped = false
        var connection: SocketConnection?
        var session: SyncSession?
        /// Set under the lock once the peer answered the hello; `session.peer` itself belongs to
        /// the connection's queue and is never read from here.
        var isSynced = false
        var backoff = ReplicaLink.minimumBackoff
    }

    /// The first wait before reconnecting; it doubles up to `maximumBackoff`.
    public static let minimumBackoff = 0.1
    /// The longest wait between attempts.
    public static let maximumBackoff = 5.0

    /// The socket this link dials.
    public let socketPath: String
    private let settings: Settings
    private let logger: SettingsLogger?
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "settingsd.replica-link")

    init(settings: Settings, socketPath: String, logger: SettingsLogger?) {
        self.settings = settings
        self.socketPath = socketPath
        self.logger = logger
    }

    deinit {
        stop()
    }

    /// Whether a sync session is up now.
    public var isConnected: Bool {
        state.withLock { $0.isSynced && $0.connection != nil }
    }

    /// Closes the connection and stops reconnecting.
    public func stop() {
        let connection = state.withLock { state -> SocketConnection? in
            state.isStopped = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.queue.async { connection?.close() }
    }

    func start() {
        queue.async { [self] in attempt() }
    }

    private func attempt() {
        guard !state.withLock({ $0.isStopped }) else { return }
        let fd: Int32
        do throws(SettingsError) {
            fd = try UnixSocket.connect(path: socketPath)
        } catch {
            retryLater(error)
            return
        }
        let connection = SocketConnection(
            fd: fd, label: "settingsd.replica", maximumFrameBytes: SyncSession.maximumFrameBytes,
            outboundLimit: 64 << 20)
        let session = SyncSession(
            settings: settings, address: socketPath, send: { [weak connection] in connection?.send($0) },
            execute: { [connection] task in connection.queue.async(execute: task) })
        var saidHello = false
        connection.onFrame = { [self, weak connection] frame in
            do throws(SettingsError) {
                let json = try JSONValue.parse(frame)
                if saidHello {
                    try session.receive(json)
                } else {
                    saidHello = true
                    try session.accept(response: WireMessage.decode(json))
                    state.withLock { state in
                        state.backoff = Self.minimumBackoff
                        state.isSynced = true
                    }
                    logger?.log(.info, "syncing with \(session.peer?.description ?? "?") at \(socketPath)")
                }
            } catch {
                connection?.fail(error)
            }
        }
        connection.onClose = { [self] error in
            session.close()
            state.withLock { state in
                state.connection = nil
                state.session = nil
                state.isSynced = false
            }
            retryLater(
                error
                    ?? SettingsError(.connectionLost, "the replica at '\(socketPath)' closed the connection"))
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
        connection.start()
        connection.queue.async { connection.send(session.hello()) }
    }

    private func retryLater(_ error: SettingsError) {
        let delay = state.withLock { state -> Double? in
            guard !state.isStopped else { return nil }
            defer { state.backoff = min(state.backoff * 2, Self.maximumBackoff) }
            return state.backoff
        }
        guard let delay else { return }
        logger?.log(.debug, "replica link to \(socketPath): \(error.message); retrying in \(delay) s")
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.attempt() }
    }
}

extension Settings {
    /// Starts syncing this store with the replica (usually a daemon) at `socketPath`, in both
    /// directions, reconnecting with backoff while it is unreachable. The store keeps working on
    /// its own file meanwhile; changes converge when the connection is up.
    ///
    /// - Returns: The link; it runs until `stop()` or until it is released.
    public func sync(with socketPath: String, logger: SettingsLogger? = nil) -> ReplicaLink {
        let link = ReplicaLink(settings: self, socketPath: socketPath, logger: logger)
        link.start()
        return link
    }
}
