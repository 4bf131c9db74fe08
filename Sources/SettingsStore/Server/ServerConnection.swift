/// One client of the daemon: reads its requests in order, answers them in order, and pushes the
/// change events of its watches.
///
/// Requests of one connection never overtake each other: while a write waits for its commit,
/// later requests wait too (a `get` after a `set` sees the `set`). Consecutive writes already
/// received are submitted together.
///
/// Unchecked Sendable: all mutable state is confined to the socket connection's serial queue.
final class ServerConnection: @unchecked Sendable {
    let id: Int
    let peer: PeerCredentials
    private let socket: SocketConnection
    private let context: ServerContext
    private let handler: RequestHandler
    private var inbox: [(id: Int64?, request: Result<WireRequest, SettingsError>)] = []
    private var inboxStart = 0
    private var writesInFlight = 0
    private var watches: [Int64: SubscriptionToken] = [:]
    private var nextWatch: Int64 = 1
    private var isShuttingDown = false
    /// Past this many decoded requests waiting, stop reading until they are answered.
    private static let inboxHighWater = 4096

    var onClose: (ServerConnection) -> Void = { _ in }

    init(id: Int, fd: Int32, peer: PeerCredentials, context: ServerContext) {
        self.id = id
        self.peer = peer
        self.context = context
        self.handler = RequestHandler(context: context)
        self.socket = SocketConnection(
            fd: fd, label: "settingsd.client.\(id)",
            maximumFrameBytes: context.configuration.maximumFrameBytes,
            outboundLimit: context.configuration.outboundLimitBytes)
    }

    func start() {
        socket.onFrame = { [unowned self] frame in received(frame) }
        socket.onClose = { [unowned self] error in closed(error) }
        socket.start()
    }

    /// Stops reading, lets in-flight writes answer, then closes once everything is written.
    func shutDown() {
        socket.queue.async { [self] in
            isShuttingDown = true
            socket.pauseReading()
            inbox.removeAll()
            inboxStart = 0
            if writesInFlight == 0 { socket.closeWhenFlushed() }
        }
    }

    /// Closes now, whatever is pending.
    func forceClose() {
        socket.queue.async { [self] in socket.close() }
    }

    private func received(_ frame: ArraySlice<UInt8>) {
        let decoded: (id: Int64?, request: Result<WireRequest, SettingsError>)
        do throws(SettingsError) {
            decoded = WireRequest.decode(try JSONValue.parse(frame))
        } catch {
            decoded = (nil, .failure(error))
        }
        inbox.append(decoded)
        if inbox.count - inboxStart > Self.inboxHighWater { socket.pauseReading() }
        process()
    }

    private func process() {
        while writesInFlight == 0, inboxStart < inbox.count, !socket.isClosed {
            let (id, request) = inbox[inboxStart]
            switch request {
            case .failure(let error):
                inboxStart += 1
                socket.send(WireMessage.failure(id: id, error))
            case .success(let request) where request.isWrite:
                submitWrites()
            case .success(let request):
                inboxStart += 1
                socket.send(answer(request, id: id))
            }
        }
        if inboxStart == inbox.count, !isShuttingDown {
            inbox.removeAll(keepingCapacity: true)
            inboxStart = 0
            socket.resumeReading()
        }
    }

    /// Submits the run of write requests at the head of the inbox; answers come back in order.
    private func submitWrites() {
        while inboxStart < inbox.count, case .success(let request) = inbox[inboxStart].request,
            request.isWrite
        {
            let id = inbox[inboxStart].id
            inboxStart += 1
            guard case .write(let reason, let apply) = handler.handle(request) else { continue }
            writesInFlight += 1
            context.committer.submit(
                GroupCommitter.Work(reason: reason, apply: apply) { [self] result in
                    socket.queue.async { [self] in writeFinished(id: id, result) }
                })
        }
    }

    private func writeFinished(id: Int64?, _ result: Result<[String: JSONValue], SettingsError>) {
        writesInFlight -= 1
        switch result {
        case .success(let fields): socket.send(WireMessage.success(id: id, fields))
        case .failure(let error): socket.send(WireMessage.failure(id: id, error))
        }
        guard writesInFlight == 0 else { return }
        if isShuttingDown {
            socket.closeWhenFlushed()
        } else {
            process()
        }
    }

    private func answer(_ request: WireRequest, id: Int64?) -> JSONValue {
        switch request {
        case .watch(let filter):
            guard watches.count < context.configuration.maximumWatchesPerConnection else {
                return WireMessage.failure(
                    id: id,
                    SettingsError(
                        .tooManyItems,
                        "a connection may hold at most \(context.configuration.maximumWatchesPerConnection) watches"
                    ))
            }
            let watch = nextWatch
            nextWatch += 1
            watches[watch] = context.settings.observe(filter) { [weak socket] change in
                socket?.send(fromAnyThread: WireMessage.event(watch: watch, change))
            }
            context.watches.add(1, ordering: .relaxed)
            return WireMessage.success(id: id, ["watch": .integer(watch)])
        case .unwatch(let watch):
            guard let token = watches.removeValue(forKey: watch) else {
                return WireMessage.failure(
                    id: id, SettingsError(.protocolError, "no watch \(watch) on this connection"))
            }
            token.cancel()
            context.watches.subtract(1, ordering: .relaxed)
            return WireMessage.success(id: id)
        default:
            switch handler.handle(request) {
            case .answer(.success(let fields)): return WireMessage.success(id: id, fields)
            case .answer(.failure(let error)): return WireMessage.failure(id: id, error)
            case .write: return WireMessage.failure(id: id, SettingsError(.protocolError, "unexpected write"))
            }
        }
    }

    private func closed(_ error: SettingsError?) {
        for token in watches.values { token.cancel() }
        context.watches.subtract(watches.count, ordering: .relaxed)
        watches = [:]
        if let error {
            context.logger.log(.warning, "client \(id) (pid \(peer.pid)) closed: \(error.message)")
        } else {
            context.logger.log(.debug, "client \(id) (pid \(peer.pid)) disconnected")
        }
        onClose(self)
    }
}
