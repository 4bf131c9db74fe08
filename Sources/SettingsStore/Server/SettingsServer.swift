import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A settings store served on a Unix socket: the heart of `settingsd run`.
///
/// ```swift
/// let server = SettingsServer(settings: settings, configuration: .init(socketPath: path))
/// try server.start()
/// // ...
/// server.stop()   // stop accepting, answer in-flight requests, close clients, remove the socket
/// ```
public final class SettingsServer: Sendable {
    private struct State {
        var listener: Int32 = -1
        var acceptSource: DispatchSourceRead?
        var connections: [Int: ServerConnection] = [:]
        var nextID = 1
        var isStopped = false
    }

    private let context: ServerContext
    private let state = Mutex(State())
    private let acceptQueue = DispatchQueue(label: "settingsd.accept")

    /// A server for `settings`, not yet listening.
    public init(settings: Settings, configuration: ServerConfiguration) {
        self.context = ServerContext(settings: settings, configuration: configuration)
    }

    /// The socket path.
    public var socketPath: String { context.configuration.socketPath }

    /// The number of connected clients.
    public var clientCount: Int { context.clients.load(ordering: .relaxed) }

    /// Creates the socket (its folder 0700 if new, the socket 0600) and starts accepting.
    ///
    /// - Throws: `SettingsError` when another daemon answers on the path, or the socket cannot
    ///   be made. A stale socket file left by a crashed daemon is replaced.
    public func start() throws(SettingsError) {
        let path = socketPath
        try FileSystem.createDirectories(FileSystem.parent(of: path))
        try Self.removeStaleSocket(at: path)
        let listener = try UnixSocket.listen(path: path)
        state.withLock { state in
            let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: acceptQueue)
            source.setEventHandler { [weak self] in self?.acceptPending(listener) }
            source.setCancelHandler { close(listener) }
            state.listener = listener
            state.acceptSource = source
            source.resume()
        }
        context.logger.log(.info, "listening on \(path)")
    }

    /// Stops accepting, removes the socket, lets in-flight requests finish (at most `timeout`
    /// seconds), then closes every connection. The store stays open: close it after.
    public func stop(timeout: Double = 2) {
        let connections = state.withLock { state -> [ServerConnection]? in
            guard !state.isStopped else { return nil }
            state.isStopped = true
            state.acceptSource?.cancel()
            state.acceptSource = nil
            return Array(state.connections.values)
        }
        guard let connections else { return }
        unlink(socketPath)
        for connection in connections { connection.shutDown() }
        context.committer.waitUntilIdle()
        let deadline = SettingsConfiguration.systemClock() + UInt64(timeout * 1000)
        while clientCount > 0, SettingsConfiguration.systemClock() < deadline { usleep(2_000) }
        let remaining = state.withLock { Array($0.connections.values) }
        for connection in remaining { connection.forceClose() }
        context.logger.log(.info, "stopped; \(remaining.count) slow client(s) closed")
    }

    private func acceptPending(_ listener: Int32) {
        while let fd = UnixSocket.accept(listener) {
            guard let peer = UnixSocket.peerCredentials(fd) else {
                context.logger.log(.warning, "refused a connection: cannot read its credentials")
                close(fd)
                continue
            }
            guard isAllowed(peer.uid) else {
                context.logger.log(
                    .warning, "refused a connection from uid \(peer.uid) (pid \(peer.pid)): not allowed")
                refuse(
                    fd,
                    SettingsError(
                        .accessDenied, "uid \(peer.uid) may not use this settingsd (see --allow-uid)"))
                continue
            }
            let connection = state.withLock { state -> ServerConnection? in
                guard !state.isStopped else { return nil }
                let connection = ServerConnection(id: state.nextID, fd: fd, peer: peer, context: context)
                state.nextID += 1
                state.connections[connection.id] = connection
                return connection
            }
            guard let connection else {
                close(fd)
                continue
            }
            context.clients.add(1, ordering: .relaxed)
            context.logger.log(.debug, "client \(connection.id) connected (pid \(peer.pid), uid \(peer.uid))")
            connection.onClose = { [weak self] connection in self?.remove(connection) }
            connection.start()
        }
    }

    /// Tells a refused peer why (best effort, never blocking), then closes a moment later: a Unix
    /// socket closed with unread input resets the peer, which would lose the explanation, so the
    /// request the peer sends meanwhile is read and dropped first.
    private func refuse(_ fd: Int32, _ error: SettingsError) {
        var frame: [UInt8] = []
        WireMessage.failure(id: nil, error).write(to: &frame)
        frame.append(UInt8(ascii: "\n"))
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(fd, Int32(SHUT_WR))
        acceptQueue.asyncAfter(deadline: .now() + 0.2) {
            var sink = [UInt8](repeating: 0, count: 4096)
            while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0
            {}
            close(fd)
        }
    }

    private func remove(_ connection: ServerConnection) {
        let removed = state.withLock { $0.connections.removeValue(forKey: connection.id) != nil }
        if removed { context.clients.subtract(1, ordering: .relaxed) }
    }

    private func isAllowed(_ uid: UInt32) -> Bool {
        uid == getuid() || uid == 0 || context.configuration.allowedUIDs.contains(uid)
    }

    /// Removes a socket file nobody answers on; refuses when a daemon answers, or when the path
    /// holds something other than a socket.
    private static func removeStaleSocket(at path: String) throws(SettingsError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SettingsError(.io, "'\(path)' exists and is not a socket; not replacing it", path: path)
        }
        do throws(SettingsError) {
            let fd = try UnixSocket.connect(path: path)
            close(fd)
            throw SettingsError(
                .databaseInUse, "another settingsd is already listening on '\(path)'", path: path)
        } catch  where error.code == .daemonNotRunning {
            unlink(path)
        }
    }
}
