import Dispatch
import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The server's loop-thread half: the listener, the connections, and what accepting needs at the
/// open-file limit. It never names the public `SettingsServer`, so a server released without
/// `stop()` stops cleanly and nothing the loop still runs can reach a freed object.
///
/// Unchecked Sendable: touched only on the event loop's thread.
final class ServerAcceptor: @unchecked Sendable {  // loop thread only
    let context: ServerContext
    let loop: PollLoop
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
    /// How many descriptors clients may take, under the limit in force when listening began.
    var budget = DescriptorBudget()
    /// Refused peers still owed their explanation, closed at the tick after `closeAt`: a few at
    /// a time, so a flood of refused connections holds no more descriptors than this.
    var refusedPeers: [(fd: Int32, closeAt: Deadline)] = []
    /// Refused peers that may wait for their explanation to be read, at most.
    static let lingeringRefusals = 16
    var refusals = RefusalLog()
    /// Connections per uid other than the daemon's own and root's: each such uid may hold at
    /// most half of the clients' descriptors, so an allowed user cannot lock the owner out.
    var guestConnections: [UInt32: Int] = [:]

    init(context: ServerContext, loop: PollLoop, batch: WriteBatch) {
        self.context = context
        self.loop = loop
        self.batch = batch
    }

    deinit {
        if spareDescriptor >= 0 { close(spareDescriptor) }
        for peer in refusedPeers { close(peer.fd) }
    }

    /// Starts accepting on `listener` (on the loop thread).
    func listen(on listener: Int32) {
        self.listener = listener
        budget = DescriptorBudget()
        loop.register(listener, interest: .read) { [weak self] events in
            guard let self else { return }
            // Not watched (the kernel refused): try again at the next tick, as at the fd limit.
            if events & Int16(POLLNVAL) != 0 {
                isAcceptPaused = true
            } else {
                acceptPending(listener)
            }
        }
    }

    /// Stops accepting, removes the socket file and asks every connection to finish (on the
    /// loop thread).
    func stopListening(removing socketPath: String) {
        guard let listener else { return }
        self.listener = nil
        loop.unregister(listener)
        close(listener)
        unlink(socketPath)
        for connection in connections.values { connection.shutDown() }
    }

    func acceptPending(_ listener: Int32) {
        while true {
            guard let fd = UnixSocket.accept(listener) else {
                if errno == EMFILE || errno == ENFILE { shedConnection(listener) }
                return
            }
            guard let peer = UnixSocket.peerCredentials(fd) else {
                context.logger.log(.warning, "refused a connection: cannot read its credentials")
                close(fd)
                continue
            }
            guard isAllowed(peer.uid) else {
                refuse(
                    fd, peer: peer,
                    SettingsError(
                        .accessDenied, "uid \(peer.uid) may not use this settingsd (see --allow-uid)"),
                    reason: "not allowed")
                continue
            }
            let isGuest = peer.uid != getuid() && peer.uid != 0
            if isGuest, guestConnections[peer.uid, default: 0] >= budget.guestShare {
                refuse(
                    fd, peer: peer,
                    SettingsError(
                        .overloaded,
                        "uid \(peer.uid) holds \(budget.guestShare) connections to this settingsd, the most another user may"
                    ), reason: "over its share of connections")
                continue
            }
            guard budget.admits(fd) else {
                // Inside the reserve: turned away at once, so clients never take what the daemon
                // itself needs.
                noteOutOfDescriptors()
                OutboundBuffer.sendLastWord(
                    SettingsError(.overloaded, "the daemon is out of file descriptors; try again later"),
                    to: fd)
                close(fd)
                continue
            }
            if isOutOfDescriptors {
                isOutOfDescriptors = false
                context.logger.log(.info, "file descriptors available again: accepting clients")
            }
            let connection = ServerConnection(
                id: nextID, fd: fd, peer: peer, context: context, loop: loop, batch: batch,
                readBuffer: readBuffer)
            nextID += 1
            connections[connection.id] = connection
            if isGuest { guestConnections[peer.uid, default: 0] += 1 }
            context.clients.add(1, ordering: .relaxed)
            context.logger.log(.debug, "client \(connection.id) connected (pid \(peer.pid), uid \(peer.uid))")
            connection.onClose = { [weak self, context] connection in
                guard let self else { return }
                if self.connections.removeValue(forKey: connection.id) != nil {
                    context.clients.subtract(1, ordering: .relaxed)
                    if isGuest {
                        let left = self.guestConnections[peer.uid, default: 1] - 1
                        self.guestConnections[peer.uid] = left > 0 ? left : nil
                    }
                }
                if self.connections.isEmpty, let onEmpty = self.onEmpty {
                    self.onEmpty = nil
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
        noteOutOfDescriptors()
        if spareDescriptor >= 0 { close(spareDescriptor) }
        let shed = UnixSocket.accept(listener)
        if let fd = shed {
            OutboundBuffer.sendLastWord(
                SettingsError(.overloaded, "the daemon is out of file descriptors; try again later"), to: fd)
            close(fd)
        }
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if shed == nil && spareDescriptor < 0 {
            // Nothing to give up (another thread took the descriptor): stop listening for a tick
            // rather than wake on the same pending connection in a busy loop.
            loop.setInterest([], for: listener)
            isAcceptPaused = true
        }
    }

    /// Logs, once per episode, that new clients are being turned away.
    private func noteOutOfDescriptors() {
        guard !isOutOfDescriptors else { return }
        isOutOfDescriptors = true
        context.logger.log(
            .warning,
            "out of file descriptors for clients (ulimit -n \(budget.limit), \(budget.limit - budget.ceiling) kept for the daemon): refusing new clients until some disconnect"
        )
    }

    /// Closes clients idle past the configured time, failed ones whose last word is out and
    /// refused peers whose explanation had its moment; logs what refusals were counted; and
    /// listens again if accepting was paused at the open-file limit.
    func tick() {
        let now = Deadline.now
        for connection in Array(connections.values) { connection.tick(now: now) }
        refusedPeers.removeAll { peer in
            guard now >= peer.closeAt else { return false }
            Self.drain(peer.fd)
            close(peer.fd)
            return true
        }
        for line in refusals.due(now: now) { context.logger.log(.warning, line) }
        if isAcceptPaused, let listener = listener {
            isAcceptPaused = false
            if spareDescriptor < 0 { spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            loop.setInterest(.read, for: listener)
        }
    }

    /// Tells a refused peer why (best effort, never blocking) and closes it a tick later: a Unix
    /// socket closed with unread input resets the peer, which would lose the explanation, so the
    /// request the peer sends meanwhile is read and dropped first. Beyond a few refused peers
    /// waiting, a refused peer is closed at once (a flood gets no explanation, and holds nothing).
    private func refuse(_ fd: Int32, peer: PeerCredentials, _ error: SettingsError, reason: String) {
        let now = Deadline.now
        if let line = refusals.refused(uid: peer.uid, pid: peer.pid, now: now, reason: reason) {
            context.logger.log(.warning, line)
        }
        OutboundBuffer.sendLastWord(error, to: fd)
        shutdown(fd, Int32(SHUT_WR))
        guard refusedPeers.count < Self.lingeringRefusals else {
            close(fd)
            return
        }
        refusedPeers.append((fd, now + .milliseconds(200)))
    }

    /// Drops what a refused peer sent, so that closing it does not reset the explanation away.
    private static func drain(_ fd: Int32) {
        var sink = [UInt8](repeating: 0, count: 4096)
        while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
    }

    private func isAllowed(_ uid: UInt32) -> Bool {
        uid == getuid() || uid == 0 || context.configuration.allowedUIDs.contains(uid)
    }
}
