import Dispatch
import SettingsStore
import SettingsWire
import Synchronization

/// The socket side of `SettingsClient`: says hello, matches responses to requests, routes events
/// to watch streams, and, when asked to, reconnects with backoff after the connection breaks.
///
/// On reconnection every watch is registered again from the last sequence number it delivered,
/// so the daemon replays what it missed; only when that cannot be (the daemon's history no
/// longer reaches back so far, or another store answers on the socket) does it receive one
/// change with reason `resync` (no keys) instead, and the app re-reads what it shows. Requests
/// in flight when the connection broke, and requests made while it is down, fail with
/// `connectionLost`; nothing is retried blindly.
///
/// Unchecked Sendable: the mutable tables are touched only on `queue`.
final class ClientConnection: @unchecked Sendable {  // state on `queue` only
    typealias Reply = (Result<[String: JSONValue], SettingsError>) -> Void

    private struct Watch {
        let filter: ChangeFilter
        let continuation: AsyncThrowingStream<SettingsChange, any Error>.Continuation
        /// The daemon's number for it on the current connection (nil until registered).
        var remote: Int64?
        /// Every change through this number was delivered: where a reconnection resumes (nil:
        /// nowhere known, a daemon that numbers no changes).
        var delivered: Int64?
        /// The daemon whose numbers `delivered` counts in.
        var replica: ReplicaID?
    }

    private let queue = DispatchQueue(label: "settingsd.client")
    private let socketPath: String
    private let reconnects: Bool
    private var socket: SocketConnection?
    private var isClosed = false
    private var backoff = Backoff()
    private var nextID: Int64 = 1
    private var pending: [Int64: Reply] = [:]
    private var watches: [Int64: Watch] = [:]
    private var nextWatch: Int64 = 1
    /// The daemon's replica id, from its hello answer.
    private var daemonReplica: ReplicaID?

    private init(socketPath: String, reconnects: Bool) {
        self.socketPath = socketPath
        self.reconnects = reconnects
    }

    deinit {
        let socket = self.socket
        queue.async { socket?.close() }
    }

    /// Connects and says hello; throws when the first attempt fails (later breaks reconnect).
    static func connect(to socketPath: String, reconnects: Bool) async throws(SettingsError)
        -> ClientConnection
    {
        let connection = ClientConnection(socketPath: socketPath, reconnects: reconnects)
        let fd = try DaemonTrust.connect(path: socketPath)
        let result = await withCheckedContinuation { continuation in
            connection.queue.async {
                connection.open(fd) { continuation.resume(returning: $0) }
            }
        }
        try result.get()
        return connection
    }

    /// Closes the connection for good: pending requests fail and watches end.
    func close() {
        queue.async { [self] in
            isClosed = true
            let error = SettingsError(.connectionLost, "the client closed the connection")
            if let socket {
                socket.close(error)
            } else {
                endWatches(error)
            }
        }
    }

    /// Sends `request` and returns the response's fields.
    func send(_ request: WireRequest) async throws(SettingsError) -> [String: JSONValue] {
        let result = await withCheckedContinuation { continuation in
            queue.async { [self] in send(request) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    /// Registers a watch, replaying the changes after `since` first when given; the stream ends
    /// when the task is cancelled or the client closes.
    func watch(_ filter: ChangeFilter, since: Int64?) async throws(SettingsError) -> AsyncThrowingStream<
        SettingsChange, any Error
    > {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SettingsChange.self)
        let result = await withCheckedContinuation {
            (done: CheckedContinuation<Result<Int64, SettingsError>, Never>) in
            queue.async { [self] in
                let local = nextWatch
                nextWatch += 1
                watches[local] = Watch(
                    filter: filter, continuation: continuation, delivered: since,
                    replica: since == nil ? nil : daemonReplica)
                register(local) { error in
                    if let error {
                        self.watches[local] = nil
                        done.resume(returning: .failure(error))
                    } else {
                        done.resume(returning: .success(local))
                    }
                }
            }
        }
        let local = try result.get()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            queue.async { [self] in
                guard let watch = watches.removeValue(forKey: local), let remote = watch.remote else {
                    return
                }
                socket?.send(WireRequest.unwatch(watch: remote).json(id: 0))
            }
        }
        return stream
    }

    // MARK: On the queue

    private func send(_ request: WireRequest, reply: @escaping Reply) {
        guard let socket else {
            let state = isClosed ? "is closed" : "is reconnecting to '\(socketPath)'"
            reply(.failure(SettingsError(.connectionLost, "the client \(state)", path: socketPath)))
            return
        }
        let id = nextID
        nextID += 1
        pending[id] = reply
        socket.send(request.json(id: id))
    }

    /// Asks the daemon for watch `local`'s events, from where it stopped when it has delivered
    /// any of this daemon's; `done` gets nil or the refusal.
    private func register(_ local: Int64, done: @escaping (SettingsError?) -> Void) {
        guard let watch = watches[local] else { return done(nil) }
        let since = watch.replica == daemonReplica ? watch.delivered : nil
        send(.watch(filter: watch.filter, since: since)) { [self] result in
            switch result {
            case .success(let fields):
                guard case .integer(let remote)? = fields["watch"] else {
                    return done(SettingsError(.protocolError, "the daemon's watch answer has no watch id"))
                }
                watches[local]?.remote = remote
                watches[local]?.replica = daemonReplica
                // A fresh watch hears every change after the daemon's number then; a resumed one
                // stays where it was until the replay's changes come.
                if since == nil, case .integer(let sequence)? = fields["sequence"] {
                    watches[local]?.delivered = sequence
                }
                done(nil)
            case .failure(let error):
                done(error)
            }
        }
    }

    /// Wraps a connected socket and says hello; `done` gets the hello's outcome.
    private func open(_ fd: Int32, done: @escaping (Result<Void, SettingsError>) -> Void) {
        let socket = SocketConnection(
            fd: fd, label: "settingsd.client", maximumFrameBytes: 64 << 20, outboundLimit: 64 << 20,
            queue: queue)
        socket.onFrame = { [weak self] frame in self?.received(frame) }
        socket.onClose = { [weak self, socketPath] error in
            self?.closed(
                error
                    ?? SettingsError(
                        .connectionLost, "the daemon on '\(socketPath)' closed the connection",
                        path: socketPath))
        }
        self.socket = socket
        socket.start()
        send(.hello(WireRequest.Hello())) { [self] result in
            switch result {
            case .success(let fields):
                do throws(SettingsError) {
                    daemonReplica = try Welcome(
                        fields: JSONFields(JSONMembers(fields)), role: .client, address: socketPath
                    ).replica
                } catch {
                    socket.close(error)
                    done(.failure(error))
                    return
                }
                backoff.reset()
                done(.success(()))
            case .failure(let error):
                socket.close(error)
                done(.failure(error))
            }
        }
    }

    private func received(_ frame: ArraySlice<UInt8>) {
        let incoming: WireMessage.Incoming
        do throws(SettingsError) {
            incoming = try WireMessage.decode(frame: frame)
        } catch {
            socket?.close(error)
            return
        }
        switch incoming {
        case .response(let id?, let result):
            pending.removeValue(forKey: id)?(result.map(\.fields))
        case .response(nil, let result):
            if case .failure(let error) = result { socket?.close(error) }
        case .event(let remote, let change):
            guard let local = watches.first(where: { $0.value.remote == remote })?.key else { return }
            guard var watch = watches[local] else { return }
            watch.delivered = max(watch.delivered ?? change.sequence, change.sequence)
            watches[local] = watch
            watch.continuation.yield(change)
        }
    }

    private func closed(_ error: SettingsError) {
        socket = nil
        let replies = pending.values
        pending = [:]
        for reply in replies { reply(.failure(error)) }
        guard reconnects, !isClosed else {
            endWatches(error)
            return
        }
        for local in watches.keys { watches[local]?.remote = nil }
        scheduleReconnect()
    }

    private func endWatches(_ error: SettingsError) {
        let ended = watches.values
        watches = [:]
        for watch in ended { watch.continuation.finish(throwing: error) }
    }

    private func scheduleReconnect() {
        let delay = backoff.next()
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.reconnect() }
    }

    private func reconnect() {
        guard !isClosed, socket == nil else { return }
        let fd: Int32
        do throws(SettingsError) {
            fd = try DaemonTrust.connect(path: socketPath)
        } catch {
            return scheduleReconnect()
        }
        open(fd) { [self] result in
            guard case .success = result else { return }
            for local in watches.keys { resume(local) }
        }
    }

    /// Registers watch `local` again after a reconnection: from where it stopped, or, when the
    /// daemon cannot replay that, afresh with a `resync`.
    private func resume(_ local: Int64) {
        guard let watch = watches[local] else { return }
        let canReplay = watch.delivered != nil && watch.replica == daemonReplica
        register(local) { [self] error in
            guard let watch = watches[local] else { return }
            if let error {
                guard canReplay, error.code == .historyCompacted || error.code == .invalidValue else {
                    watches[local] = nil
                    return watch.continuation.finish(throwing: error)
                }
                // Too far back: start afresh, and say so.
                watches[local]?.delivered = nil
                watches[local]?.replica = nil
                return resume(local)
            }
            guard !canReplay, let origin = daemonReplica else { return }
            let sequence = watches[local]?.delivered ?? 0
            watch.continuation.yield(
                SettingsChange(reason: .resync, origin: origin, changes: [], sequence: sequence))
        }
    }
}
