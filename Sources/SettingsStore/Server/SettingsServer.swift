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
///
/// One event-loop thread serves every connection: reads are answered from the store's memory at
/// once, and the writes of each round are committed together before they are acknowledged.
public final class SettingsServer: Sendable {
    private let context: ServerContext
    private let loop: PollLoop
    private let finished = DispatchSemaphore(value: 0)
    /// Set once `start()` has the loop running; `stop()` does its work once, and only then.
    private let isRunning = Atomic<Bool>(false)
    /// Loop-thread state: the listener and the connections.
    private let table: LoopTable

    /// A server for `settings`, not yet listening.
    public init(settings: Settings, configuration: ServerConfiguration) throws(SettingsError) {
        let minimum = ServerConfiguration.minimumFrameBytes(for: settings.configuration.limits)
        guard configuration.maximumFrameBytes >= minimum else {
            throw SettingsError(
                .invalidValue,
                "a maximum frame of \(configuration.maximumFrameBytes) bytes cannot carry the largest value the store allows; it must be at least \(minimum)"
            )
        }
        context = ServerContext(settings: settings, configuration: configuration)
        loop = try PollLoop()
        table = LoopTable(batch: WriteBatch(settings: settings))
        loop.afterRound = { [table] in table.batch.commit() }
        loop.onTick = { [weak self] in self?.tick() }
    }

    /// The socket path.
    public var socketPath: String { context.configuration.socketPath }

    /// The number of connected clients.
    public var clientCount: Int { context.clients.load(ordering: .relaxed) }

    /// Creates the socket (its folder 0700 if new, the socket 0600) and starts serving.
    ///
    /// With `allowedUIDs`, other users must reach the socket: it is made 0666 and its folder
    /// searchable (not listable) by them, and each connection's uid is checked when it arrives.
    ///
    /// - Throws: `SettingsError` when another daemon answers on the path, or the socket cannot
    ///   be made. A stale socket file left by a crashed daemon is replaced.
    public func start() throws(SettingsError) {
        let path = socketPath
        let folder = FileSystem.parent(of: path)
        try FileSystem.createDirectories(folder)
        let folderInfo = try Self.checkOwnership(of: folder)
        try Self.removeStaleSocket(at: path)
        let isShared = !context.configuration.allowedUIDs.isEmpty
        if isShared, folderInfo.st_uid == getuid(), folderInfo.st_mode & 0o011 != 0o011 {
            guard chmod(folder, (folderInfo.st_mode & 0o7777) | 0o011) == 0 else {
                throw FileSystem.error("cannot let allowed users reach '\(folder)'", path: folder)
            }
        }
        let listener = try UnixSocket.listen(path: path, mode: isShared ? 0o666 : 0o600)
        loop.execute { [self] in
            table.listener = listener
            loop.register(listener, interest: .read) { [unowned self] events in
                // Not watched (the kernel refused): try again at the next tick, as at the fd limit.
                if events & Int16(POLLNVAL) != 0 {
                    table.isAcceptPaused = true
                } else {
                    acceptPending(listener)
                }
            }
        }
        try loop.runOnNewThread { [finished] in finished.signal() }
        isRunning.store(true, ordering: .releasing)
        context.logger.log(.info, "listening on \(path)")
    }

    /// Checks, changing nothing, that a server could listen on `socketPath`: the path fits a
    /// Unix socket address and no daemon answers there. `settingsd run` asks before it opens
    /// (and so creates) its database, so a daemon that cannot start leaves no file behind.
    public static func checkAvailable(socketPath path: String) throws(SettingsError) {
        try UnixSocket.checkPath(path)
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SettingsError(.io, "'\(path)' exists and is not a socket; not replacing it", path: path)
        }
        guard let fd = try? UnixSocket.connect(path: path) else { return }
        close(fd)
        throw SettingsError(.databaseInUse, "another settingsd is already listening on '\(path)'", path: path)
    }

    /// Stops accepting, removes the socket, lets in-flight requests finish (at most `timeout`
    /// seconds), then closes every connection. The store stays open: close it after.
    public func stop(timeout: Double = 2) {
        guard isRunning.exchange(false, ordering: .acquiringAndReleasing) else { return }
        loop.execute { [self] in
            guard let listener = table.listener else { return }
            table.listener = nil
            loop.unregister(listener)
            close(listener)
            unlink(socketPath)
            for connection in table.connections.values { connection.shutDown() }
        }
        // Wait for the last connection to finish, signalled by its close, or for the time-out.
        let drained = DispatchSemaphore(value: 0)
        loop.execute { [table] in
            if table.connections.isEmpty {
                drained.signal()
            } else {
                table.onEmpty = { drained.signal() }
            }
        }
        _ = drained.wait(timeout: .now() + timeout)
        loop.execute { [self] in
            let slow = table.connections.count
            for connection in table.connections.values { connection.close() }
            context.logger.log(.info, "stopped\(slow > 0 ? "; closed \(slow) slow client(s)" : "")")
        }
        loop.stop()
        finished.wait()
    }

    private func acceptPending(_ listener: Int32) {
        while true {
            guard let fd = UnixSocket.accept(listener) else {
                if errno == EMFILE || errno == ENFILE { shedConnection(listener) }
                return
            }
            if table.isOutOfDescriptors {
                table.isOutOfDescriptors = false
                context.logger.log(.info, "file descriptors available again: accepting clients")
            }
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
            let connection = ServerConnection(
                id: table.nextID, fd: fd, peer: peer, context: context, loop: loop, batch: table.batch,
                readBuffer: table.readBuffer)
            table.nextID += 1
            table.connections[connection.id] = connection
            context.clients.add(1, ordering: .relaxed)
            context.logger.log(.debug, "client \(connection.id) connected (pid \(peer.pid), uid \(peer.uid))")
            connection.onClose = { [table, context] connection in
                if table.connections.removeValue(forKey: connection.id) != nil {
                    context.clients.subtract(1, ordering: .relaxed)
                }
                if table.connections.isEmpty, let onEmpty = table.onEmpty {
                    table.onEmpty = nil
                    onEmpty()
                }
            }
            connection.start()
        }
    }

    /// At the open-file limit a pending connection would keep the listener readable forever (a
    /// busy loop): the spare descriptor is given up for a moment to accept it, tell it why, and
    /// close it. Connected clients are served on; the warning is logged once per episode.
    private func shedConnection(_ listener: Int32) {
        if !table.isOutOfDescriptors {
            table.isOutOfDescriptors = true
            context.logger.log(
                .warning, "out of file descriptors (ulimit -n): refusing new clients until some disconnect")
        }
        if table.spareDescriptor >= 0 { close(table.spareDescriptor) }
        let shed = UnixSocket.accept(listener)
        if let fd = shed {
            OutboundBuffer.sendLastWord(
                SettingsError(.overloaded, "the daemon is out of file descriptors; try again later"), to: fd)
            close(fd)
        }
        table.spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if shed == nil && table.spareDescriptor < 0 {
            // Nothing to give up (another thread took the descriptor): stop listening for a tick
            // rather than wake on the same pending connection in a busy loop.
            loop.setInterest([], for: listener)
            table.isAcceptPaused = true
        }
    }

    /// Closes clients idle past the configured time, and failed ones whose last word is out; and
    /// listens again if accepting was paused at the open-file limit.
    private func tick() {
        let now = SettingsConfiguration.systemClock()
        for connection in Array(table.connections.values) { connection.tick(now: now) }
        if table.isAcceptPaused, let listener = table.listener {
            table.isAcceptPaused = false
            if table.spareDescriptor < 0 { table.spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            loop.setInterest(.read, for: listener)
        }
    }

    /// Tells a refused peer why (best effort, never blocking), then closes a moment later: a Unix
    /// socket closed with unread input resets the peer, which would lose the explanation, so the
    /// request the peer sends meanwhile is read and dropped first.
    private func refuse(_ fd: Int32, _ error: SettingsError) {
        OutboundBuffer.sendLastWord(error, to: fd)
        shutdown(fd, Int32(SHUT_WR))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            var sink = [UInt8](repeating: 0, count: 4096)
            while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0
            {}
            close(fd)
        }
    }

    private func isAllowed(_ uid: UInt32) -> Bool {
        uid == getuid() || uid == 0 || context.configuration.allowedUIDs.contains(uid)
    }

    /// Refuses a socket folder another user owns (someone could pre-create `/tmp/settingsd-<uid>`);
    /// returns what `stat` says about it.
    @discardableResult
    private static func checkOwnership(of folder: String) throws(SettingsError) -> stat {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            throw FileSystem.error("cannot inspect '\(folder)'", path: folder)
        }
        let isSharedSticky = info.st_mode & S_ISVTX != 0 && info.st_uid == 0
        guard info.st_uid == getuid() || info.st_uid == 0 || isSharedSticky else {
            throw SettingsError(
                .accessDenied, "socket folder '\(folder)' belongs to uid \(info.st_uid), not to this user",
                path: folder)
        }
        return info
    }

    /// Removes a socket file nobody answers on; refuses, like `checkAvailable`, when a daemon
    /// answers, or when the path holds something other than a socket.
    private static func removeStaleSocket(at path: String) throws(SettingsError) {
        try checkAvailable(socketPath: path)
        unlink(path)
    }
}

/// The server's loop-thread state.
///
/// Unchecked Sendable: touched only on the event loop's thread.
private final class LoopTable: @unchecked Sendable {  // loop thread only
    let batch: WriteBatch
    /// One receive buffer for every connection: the loop reads one socket at a time.
    let readBuffer = ReadBuffer()
    var listener: Int32?
    var connections: [Int: ServerConnection] = [:]
    var nextID = 1
    /// Held so that one descriptor can be freed to turn a client away at the open-file limit.
    var spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
    var isOutOfDescriptors = false
    /// The listener is not watched for a tick: at the open-file limit with no spare to give up.
    var isAcceptPaused = false
    /// Called once when the last connection closes, while the server stops.
    var onEmpty: (() -> Void)?

    init(batch: WriteBatch) {
        self.batch = batch
    }
}
