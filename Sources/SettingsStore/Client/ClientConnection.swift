import Synchronization

/// The socket side of `SettingsClient`: matches responses to requests and routes events to
/// watch streams.
///
/// Unchecked Sendable: the mutable tables are touched only on the socket's serial queue.
final class ClientConnection: @unchecked Sendable {  // state on the socket queue only
    private let socket: SocketConnection
    private let socketPath: String
    private var nextID: Int64 = 1
    private var pending: [Int64: CheckedContinuation<Result<[String: JSONValue], SettingsError>, Never>] = [:]
    private var watches: [Int64: AsyncThrowingStream<SettingsChange, any Error>.Continuation] = [:]
    private var failure: SettingsError?

    init(fd: Int32, socketPath: String) {
        self.socketPath = socketPath
        socket = SocketConnection(
            fd: fd, label: "settingsd.client", maximumFrameBytes: 64 << 20, outboundLimit: 64 << 20)
        // Weak: `deinit` closes the socket after this object is gone, which calls `onClose`.
        socket.onFrame = { [weak self] frame in self?.received(frame) }
        socket.onClose = { [weak self] error in
            self?.closed(
                error
                    ?? SettingsError(
                        .connectionLost, "the daemon on '\(socketPath)' closed the connection",
                        path: socketPath))
        }
        socket.start()
    }

    deinit {
        socket.queue.async { [socket] in socket.close() }
    }

    func close() {
        socket.queue.async { [self] in
            socket.close(SettingsError(.connectionLost, "the client closed the connection"))
        }
    }

    func send(_ request: WireRequest) async throws(SettingsError) -> [String: JSONValue] {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<[String: JSONValue], SettingsError>, Never>) in
            socket.queue.async { [self] in
                if let failure {
                    continuation.resume(returning: .failure(failure))
                    return
                }
                let id = nextID
                nextID += 1
                pending[id] = continuation
                socket.send(request.json(id: id))
            }
        }
        return try result.get()
    }

    func watch(_ filter: ChangeFilter) async throws(SettingsError) -> AsyncThrowingStream<
        SettingsChange, any Error
    > {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SettingsChange.self)
        let fields = try await send(.watch(filter: filter))
        guard case .integer(let watch)? = fields["watch"] else {
            throw SettingsError(.protocolError, "the daemon's watch answer has no watch id")
        }
        socket.queue.async { [self] in
            if let failure {
                continuation.finish(throwing: failure)
            } else {
                watches[watch] = continuation
            }
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            socket.queue.async { [self] in
                guard watches.removeValue(forKey: watch) != nil, failure == nil else { return }
                socket.send(WireRequest.unwatch(watch: watch).json(id: 0))
            }
        }
        return stream
    }

    private func received(_ frame: ArraySlice<UInt8>) {
        let incoming: WireMessage.Incoming
        do throws(SettingsError) {
            incoming = try WireMessage.decode(JSONValue.parse(frame))
        } catch {
            socket.close(error)
            return
        }
        switch incoming {
        case .response(let id?, let result):
            pending.removeValue(forKey: id)?.resume(returning: result)
        case .response(nil, let result):
            if case .failure(let error) = result { socket.close(error) }
        case .event(let watch, let change):
            watches[watch]?.yield(change)
        }
    }

    private func closed(_ error: SettingsError) {
        failure = error
        for continuation in pending.values { continuation.resume(returning: .failure(error)) }
        pending = [:]
        for continuation in watches.values { continuation.finish(throwing: error) }
        watches = [:]
    }
}
