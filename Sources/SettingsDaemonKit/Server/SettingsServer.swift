import Dispatch
import SettingsDaemonClient
package import SettingsGNOME
package import SettingsStore
package import SettingsSync
import SettingsWire
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
package final class SettingsServer: Sendable {
    private let context: ServerContext
    private let loop: PollLoop
    private let finished = DispatchSemaphore(value: 0)
    /// Set once `start()` has the loop running; `stop()` does its work once, and only then.
    private let isRunning = Atomic<Bool>(false)
    /// Loop-thread state: the listener and the connections.
    private let acceptor: ServerAcceptor

    /// A server for the store `replicator` syncs, not yet listening: replicas that connect join
    /// the replicator's sessions, and `status` shows its peers, links and dconf bridge.
    package init(
        replicator: Replicator, configuration: ServerConfiguration, dconf: DconfBridge? = nil,
        flatpak: FlatpakBridge? = nil
    ) throws(SettingsError) {
        let settings = replicator.settings
        let minimum = ServerConfiguration.minimumFrameBytes(for: settings.configuration.limits)
        guard configuration.maximumFrameBytes >= minimum else {
            throw SettingsError(
                .invalidValue,
                "a maximum frame of \(configuration.maximumFrameBytes) bytes cannot carry the largest value the store allows; it must be at least \(minimum)"
            )
        }
        context = ServerContext(
            replicator: replicator, configuration: configuration, dconf: dconf, flatpak: flatpak)
        loop = try PollLoop()
        acceptor = ServerAcceptor(context: context, loop: loop, batch: WriteBatch(settings: settings))
        loop.afterRound = { [weak acceptor] in acceptor?.batch.commit() }
        loop.onTick = { [weak acceptor] in acceptor?.tick() }
    }

    /// A server for `settings` with a replicator of its own, not yet listening.
    package convenience init(settings: Settings, configuration: ServerConfiguration) throws(SettingsError) {
        try self.init(
            replicator: Replicator(settings: settings, logger: configuration.logger),
            configuration: configuration)
    }

    /// Stops the server if it still runs: a released server never leaves its loop serving.
    deinit {
        stop()
    }

    /// The socket path.
    package var socketPath: String { context.configuration.socketPath }

    /// The replicator whose sessions replicas join.
    package var replicator: Replicator { context.replicator }

    /// The number of connected clients.
    package var clientCount: Int { context.clients.load(ordering: .relaxed) }

    /// Creates the socket (its folder 0700 if new, the socket 0600) and starts serving.
    ///
    /// With `allowedUIDs`, other users must reach the socket: it is made 0666 and its folder
    /// searchable (not listable) by them, and each connection's uid is checked when it arrives.
    ///
    /// - Throws: `SettingsError` when another daemon answers on the path, or the socket cannot
    ///   be made. A stale socket file left by a crashed daemon is replaced.
    package func start() throws(SettingsError) {
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
        loop.execute { [acceptor] in acceptor.listen(on: listener) }
        try loop.runOnNewThread { [finished] in finished.signal() }
        isRunning.store(true, ordering: .releasing)
        context.logger.log(.info, "listening on \(path)")
    }

    /// Checks, changing nothing, that a server could listen on `socketPath`: the path fits a
    /// Unix socket address and no daemon answers there. `settingsd run` asks before it opens
    /// (and so creates) its database, so a daemon that cannot start leaves no file behind.
    package static func checkAvailable(socketPath path: String) throws(SettingsError) {
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
    package func stop(timeout: Double = 2) {
        guard isRunning.exchange(false, ordering: .acquiringAndReleasing) else { return }
        // Only the acceptor goes to the loop, never `self`: this also runs from `deinit`.
        let (acceptor, loop, path, logger) = (acceptor, loop, socketPath, context.logger)
        loop.execute { acceptor.stopListening(removing: path) }
        // Wait for the last connection to finish, signalled by its close, or for the time-out.
        let drained = DispatchSemaphore(value: 0)
        loop.execute {
            if acceptor.connections.isEmpty {
                drained.signal()
            } else {
                acceptor.onEmpty = { drained.signal() }
            }
        }
        _ = drained.wait(timeout: .now() + timeout)
        loop.execute {
            let slow = acceptor.connections.count
            for connection in acceptor.connections.values { connection.close() }
            logger.log(.info, "stopped\(slow > 0 ? "; closed \(slow) slow client(s)" : "")")
        }
        loop.stop()
        finished.wait()
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
