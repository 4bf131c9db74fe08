import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// One client of the daemon: reads its requests in order, answers them in order, and pushes the
/// change events of its watches. Lives on the server's event loop thread.
///
/// Requests of one connection never overtake each other: while its writes wait for the round's
/// commit, later requests wait too (a `get` after a `set` sees the `set`).
///
/// Unchecked Sendable: all state is touched on the loop thread only; other threads (a watch fed by
/// sync, say) reach it through `PollLoop.execute`.
final class ServerConnection: @unchecked Sendable {  // loop thread only
    let id: Int
    let peer: PeerCredentials
    /// The client process as the history records its writes (its executable read at connect).
    private let actor: ChangeActor
    private let fd: Int32
    private let context: ServerContext
    private let loop: PollLoop
    private let batch: WriteBatch
    private let readBuffer: ReadBuffer
    private let handler: RequestHandler
    private var framer: LineFramer
    private var outbound: OutboundBuffer
    private var inbox: [(id: Int64?, request: Result<WireRequest, SettingsError>)] = []
    private var inboxStart = 0
    private var writesInFlight = 0
    private var watches = ConnectionWatches()
    private var isReading = true
    /// Set once the peer said hello as a replica: every later frame goes to it, on its own
    /// queues (the loop only reads and writes its socket).
    private var syncSession: SyncSession?
    private var sessionQueues: SessionQueues?
    /// Whether reading waits for the session to handle the frames already read.
    private var isSessionBehind = false
    /// Whether a request frame arrived yet: a `hello` is valid only as the first.
    private var hasReceivedFrame = false
    private var isShuttingDown = false
    private(set) var isClosed = false
    /// When the client last sent a frame or got an answer, for the idle time-out.
    private var lastActivity = Deadline.now
    /// Set when the connection failed: its error frame is queued after the last whole frame,
    /// input is read and dropped (closing with unread input would reset the peer before it reads
    /// the explanation), and it closes once the frame is out or this time has passed.
    private var failure: (error: SettingsError, deadline: Deadline)?
    /// Whether `fail(_:)` ended the connection (tested without copying the error out).
    private var hasFailed: Bool {
        if case .some = failure { true } else { false }
    }
    /// Past this many decoded requests waiting, stop reading until they are answered.
    private static let inboxHighWater = 4096
    /// Past this many answer bytes waiting to be written, answer no more until the client reads:
    /// a long pipeline of large values is served at the pace the client reads it, within the
    /// outbound limit.
    private static let outboundHighWater = 1 << 20
    /// Answers to a burst of pipelined requests leave once this many bytes wait, not when the
    /// whole burst is answered, so the client reads them while the daemon works (both cores busy:
    /// 1.5 -> 2.0 M/s pipelined gets).
    private static let partialFlushBytes = 8 << 10
    /// Values staged by `importPart` for this connection's next `import`.
    private var stagedImport: [String: SettingValue] = [:]
    /// What `stagedImport` costs, about, counted in the daemon's budget too.
    private var stagedImportBytes = 0
    /// What a staged entry costs beyond its key and value: the dictionary slot, the key string
    /// and the value's boxes (a small entry takes some 4.5 times its key and value).
    static let stagedEntryOverhead = 160

    /// What staging `values` costs, about, in bytes.
    static func stagedCost(of values: [String: SettingValue]) -> Int {
        values.reduce(0) { $0 + $1.key.utf8.count + $1.value.storageSize + stagedEntryOverhead }
    }

    /// Drops this connection's staged parts and returns their bytes to the daemon's budget.
    private func dropStagedImport() {
        guard stagedImportBytes > 0 || !stagedImport.isEmpty else { return }
        context.stagedImportBytes.subtract(stagedImportBytes, ordering: .relaxed)
        let large = stagedImportBytes >= 16 << 20
        stagedImport = [:]
        stagedImportBytes = 0
        // Many small blocks were freed: give the pages back rather than keep the peak.
        if large { HeapRelease.returnFreedMemory() }
    }

    var onClose: (ServerConnection) -> Void = { _ in }

    init(
        id: Int, fd: Int32, peer: PeerCredentials, context: ServerContext, loop: PollLoop, batch: WriteBatch,
        readBuffer: ReadBuffer
    ) {
        self.readBuffer = readBuffer
        self.id = id
        self.fd = fd
        self.peer = peer
        self.actor = ChangeActor(
            uid: peer.uid, pid: peer.pid, executable: ChangeActor.executable(of: peer.pid))
        self.context = context
        self.loop = loop
        self.batch = batch
        self.handler = RequestHandler(settings: context.settings, server: context)
        self.framer = LineFramer(maximumFrameBytes: context.configuration.maximumFrameBytes)
        self.outbound = OutboundBuffer(limit: context.configuration.outboundLimitBytes)
    }

    func start() {
        loop.register(fd, interest: .read) { [weak self] events in self?.ready(events) }
    }

    /// Stops reading; closes once in-flight writes are answered and everything is written.
    func shutDown() {
        isShuttingDown = true
        isReading = false
        inbox.removeAll()
        inboxStart = 0
        closeIfFinished()
    }

    /// Closes now, whatever is pending.
    func close(_ error: SettingsError? = nil) {
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(fd)
        Glibc.close(fd)
        endSession()
        dropWatches()
        dropStagedImport()
        outbound.discard()
        if let error {
            context.logger.log(.warning, "client \(id) (pid \(peer.pid)) closed: \(error.message)")
        } else {
            context.logger.log(.debug, "client \(id) (pid \(peer.pid)) disconnected")
        }
        onClose(self)
    }

    private func ready(_ events: Int16) {
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readAvailable() }
        if events & Int16(POLLOUT) != 0 { flush() }
        if events & Int16(POLLNVAL) != 0 { close() }
    }

    private func readAvailable() {
        if hasFailed { return discardInput() }
        lastActivity = .now
        // A few chunks per round at most, so one busy client cannot starve the others.
        for _ in 0..<4 where isReading && !isSessionBehind && !isClosed {
            switch readBuffer.read(from: fd, into: &framer, flags: Int32(MSG_DONTWAIT)) {
            case .received(let drained):
                // The client decodes the first answers while the rest of the burst is answered;
                // a full socket is tried again only once as many more bytes wait.
                var flushAt = Self.partialFlushBytes
                while !isClosed, let frame = framer.nextFrame() {
                    receive(frame)
                    if outbound.pendingByteCount >= flushAt {
                        flush()
                        flushAt = outbound.pendingByteCount + Self.partialFlushBytes
                    }
                }
                process()
                flush()
                // A short read emptied the socket: asking again would only return EAGAIN.
                if drained { return }
            case .endOfStream: return close()
            case .wouldBlock: return
            case .frameTooLarge(let error): return fail(error)
            case .failed(let error): return close(error)
            }
        }
    }

    private func receive(_ frame: ArraySlice<UInt8>) {
        if let syncSession, let sessionQueues {
            let behind = sessionQueues.submit(bytes: frame.count) { [weak self, loop] in
                let message = Result { () throws(SettingsError) in try ReplicationMessage(frame: frame) }
                return { [weak self, loop] in
                    guard !syncSession.isClosed else { return }
                    do throws(SettingsError) {
                        try syncSession.receive(message.get())
                    } catch {
                        loop.execute { [weak self] in self?.fail(error) }
                    }
                }
            }
            if behind {
                isSessionBehind = true
                updateInterest()
            }
            return
        }
        var decoded = WireRequest.decode(frame: frame)
        let isFirst = !hasReceivedFrame
        hasReceivedFrame = true
        if case .success(.hello(let hello)) = decoded.request {
            if !isFirst {
                decoded.request = .failure(
                    SettingsError(.protocolError, "a hello is only valid as the first frame of a connection"))
            } else if hello.role == .replica {
                startReplication(hello, id: decoded.id)
                return
            }
        }
        // Nothing waits before it and it may run: answer now instead of queueing a copy.
        if inboxStart == inbox.count, canRun {
            run(decoded.request, id: decoded.id)
            return
        }
        inbox.append(decoded)
        if inbox.count - inboxStart > Self.inboxHighWater {
            isReading = false
            updateInterest()
        }
    }

    /// Turns this connection into a replica sync session (see `docs/SYNC.md`).
    private func startReplication(_ hello: WireRequest.Hello, id: Int64?) {
        let queues = SessionQueues(label: "settingsd.incoming-replica") { [weak self, loop] queues in
            loop.execute { [weak self] in
                guard let self, isSessionBehind, queues.allowsReading else { return }
                isSessionBehind = false
                updateInterest()
            }
        }
        let session = context.replicator.makeSession(
            address: "incoming",
            send: { [weak self, loop] message in
                loop.execute { [weak self] in
                    self?.enqueueFrame { message.write(to: &$0) }
                    self?.flush()
                }
            },
            execute: { task in queues.session.async(execute: task) },
            end: { [weak self, loop] error in
                guard let connection = self else { return }
                loop.execute { connection.fail(error) }
            })
        // The hello is met on the session's queue: once the session joins the registry, a
        // commit's nudge runs its pump there, and reads what meeting the peer writes.
        let accepted = queues.session.sync {
            Result { () throws(SettingsError) in try session.accept(hello: hello) }
        }
        do throws(SettingsError) {
            let fields = try accepted.get()
            framer.maximumFrameBytes = max(framer.maximumFrameBytes, SyncSession.maximumFrameBytes)
            syncSession = session
            sessionQueues = queues
            enqueue(WireMessage.success(id: id, fields))
            context.logger.log(
                .info, "replica \(session.peer?.description ?? "?") connected (pid \(peer.pid))")
        } catch {
            enqueue(WireMessage.failure(id: id, error))
        }
        flush()
    }

    /// Whether the next request may run now: no write of this connection awaits its commit (a
    /// read after a write must see it) and the answers waiting to be written are few enough.
    private var canRun: Bool {
        writesInFlight == 0 && !isClosed && outbound.pendingByteCount < Self.outboundHighWater
    }

    /// Runs the queued requests, in order, as far as they may run.
    private func process() {
        while canRun, inboxStart < inbox.count {
            let (id, request) = inbox[inboxStart]
            inboxStart += 1
            run(request, id: id)
        }
        if inboxStart == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxStart = 0
            if !isReading && !isShuttingDown {
                isReading = true
                updateInterest()
            }
        }
    }

    /// Answers one request, or submits its writes to the round's batch.
    private func run(_ request: Result<WireRequest, SettingsError>, id: Int64?) {
        switch request {
        case .failure(let error):
            enqueue(WireMessage.failure(id: id, error))
        case .success(.importPart(let document)):
            enqueue(stage(document, id: id))
        case .success(var request):
            if case .import(let document, let replace, let prefixes) = request, !stagedImport.isEmpty {
                stagedImport.merge(document.values) { $1 }
                request = .import(
                    document: ExportDocument(values: stagedImport), replace: replace, replacingUnder: prefixes
                )
                dropStagedImport()
            }
            switch request {
            case .watch(let filter, let since):
                startWatch(filter, since: since, id: id)
            case .unwatch:
                enqueue(answer(request, id: id))
            default:
                switch handler.handle(request) {
                case .answer(.success(let fields)): enqueueSuccess(id: id, fields)
                case .answer(.failure(let error)): enqueue(WireMessage.failure(id: id, error))
                case .value(let value, let version):
                    enqueueFrame { WireMessage.writeValue(id: id, value, version: version, to: &$0) }
                case .write(let reason, let apply):
                    writesInFlight += 1
                    batch.add(
                        WriteBatch.Work(reason: reason, actor: actor, apply: apply) {
                            [weak self] result in self?.writeFinished(id: id, result)
                        })
                }
            }
        }
    }

    /// Keeps an import's part for the `import` that completes it on this connection.
    private func stage(_ document: ExportDocument, id: Int64?) -> JSONValue {
        let cost = Self.stagedCost(of: document.values)
        let total = context.stagedImportBytes.add(cost, ordering: .relaxed).newValue
        stagedImportBytes += cost
        let limit = context.configuration.stagedImportLimit
        guard stagedImportBytes <= limit, total <= limit else {
            let isOwn = stagedImportBytes > limit
            dropStagedImport()
            return WireMessage.failure(
                id: id,
                SettingsError(
                    .limitExceeded,
                    isOwn
                        ? "an import may stage at most \(limit) bytes; the staged parts were dropped"
                        : "the daemon is staging \(limit) bytes of imports already; the staged parts were dropped, try again later"
                ))
        }
        stagedImport.merge(document.values) { $1 }
        return WireMessage.success(id: id, ["staged": .integer(Int64(stagedImport.count))])
    }

    private func writeFinished(id: Int64?, _ result: Result<[String: JSONValue], SettingsError>) {
        writesInFlight -= 1
        lastActivity = .now
        switch result {
        case .success(let fields): enqueueSuccess(id: id, fields)
        case .failure(let error): enqueue(WireMessage.failure(id: id, error))
        }
        if !isShuttingDown { process() }
        flush()
    }

    private func answer(_ request: WireRequest, id: Int64?) -> JSONValue {
        switch request {
        case .unwatch(let watch):
            guard watches.remove(watch) else {
                return WireMessage.failure(
                    id: id, SettingsError(.protocolError, "no watch \(watch) on this connection"))
            }
            context.watches.subtract(1, ordering: .relaxed)
            return WireMessage.success(id: id)
        default:
            return WireMessage.failure(
                id: id,
                SettingsError(.unknownOperation, "'\(request.operation)' is not a connection's own request"))
        }
    }

    /// Starts a watch: answers with its number and the store's sequence number, then, with
    /// `since`, sends the changes after it from the history, paced by the client's reading,
    /// then the live ones, none missed and none twice.
    private func startWatch(_ filter: ChangeFilter, since: Int64?, id: Int64?) {
        let limit = context.configuration.maximumWatchesPerConnection
        guard watches.count < limit else {
            return enqueue(
                WireMessage.failure(
                    id: id, SettingsError(.tooManyItems, "a connection may hold at most \(limit) watches")))
        }
        let watch = watches.nextNumber
        // Observe first: a commit after this is delivered live, one before the replay's read is
        // in the replay, and `replayedThrough` drops what both hold.
        let token = context.settings.observe(filter) { [weak self, loop] change in
            guard let connection = self else { return }
            // Commits on the loop thread deliver at once; others (sync) are posted to it.
            loop.execute { connection.deliver(change, to: watch) }
        }
        let sequence = context.settings.sequence
        var replay: WatchReplay?
        if let since {
            do throws(SettingsError) {
                let (changes, through) = try context.settings.changes(since: since, matching: filter)
                replay = WatchReplay(changes, through: through)
            } catch {
                token.cancel()
                return enqueue(WireMessage.failure(id: id, error))
            }
        }
        watches.add(token, replaying: replay)
        context.watches.add(1, ordering: .relaxed)
        enqueue(WireMessage.success(id: id, ["watch": .integer(watch), "sequence": .integer(sequence)]))
        sendReplays()
    }

    /// Sends a live change to `watch`: after its replay, and only what the replay lacked.
    private func deliver(_ change: SettingsChange, to watch: Int64) {
        guard let change = watches.live(change, of: watch) else { return }
        send(WireMessage.event(watch: watch, change))
    }

    /// Sends replayed changes while fewer than `outboundHighWater` bytes wait to be written; the
    /// rest go when the client has read those (`flush()`).
    private func sendReplays() {
        guard watches.isReplaying else { return }
        while outbound.pendingByteCount < Self.outboundHighWater, !isClosed, !hasFailed,
            let (watch, change) = watches.nextReplayed()
        {
            enqueue(WireMessage.event(watch: watch, change))
        }
        flush()
    }

    /// Queues a frame and writes what the socket takes now.
    private func send(_ message: JSONValue) {
        enqueue(message)
        flush()
    }

    /// Queues a frame to be written by the next `flush()`, so the answers to a burst of pipelined
    /// requests leave in one system call; past the outbound limit the peer is not reading, and is
    /// dropped rather than let memory grow.
    private func enqueue(_ message: JSONValue) {
        enqueueFrame { message.write(to: &$0) }
    }

    private func enqueueSuccess(id: Int64?, _ fields: [String: JSONValue]) {
        enqueueFrame { WireMessage.writeSuccess(id: id, fields, to: &$0) }
    }

    /// Queues a frame `write` appends in place (see `enqueue(_:)`).
    private func enqueueFrame(_ write: (inout [UInt8]) -> Void) {
        guard !isClosed, !hasFailed else { return }
        do throws(SettingsError) {
            try outbound.appendFrame(write)
        } catch {
            fail(error)
        }
    }

    private func flush() {
        while !isClosed {
            switch outbound.flush(to: fd) {
            case .wouldBlock: return updateInterest()
            case .failed(let error): return close(error)
            case .drained:
                if watches.isReplaying, !hasFailed {
                    sendReplays()
                    return
                }
                // Requests held back while the answers waited (see `outboundHighWater`) go on now.
                if inboxStart < inbox.count, canRun, !isShuttingDown, !hasFailed {
                    process()
                    continue
                }
                updateInterest()
                return closeIfFinished()
            }
        }
    }

    private func updateInterest() {
        guard !isClosed else { return }
        var interest: PollLoop.Interest = []
        if (isReading && !isSessionBehind) || hasFailed { interest.insert(.read) }
        if !outbound.isEmpty { interest.insert(.write) }
        loop.setInterest(interest, for: fd)
    }

    private func closeIfFinished() {
        if isShuttingDown, writesInFlight == 0, outbound.isEmpty { close() }
        if hasFailed, outbound.isEmpty, !isClosed {
            // Everything, the explanation included, is out: say so, then drain until the peer closes.
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    /// Ends the connection for `error`: the frames already queued up to a frame boundary go
    /// out, then an error frame saying why, then the connection closes (see `failure`).
    private func fail(_ error: SettingsError) {
        guard !isClosed, !hasFailed else { return }
        failure = (error, .after(.seconds(5)))
        inbox.removeAll()
        inboxStart = 0
        endSession()
        dropWatches()
        outbound.endWith(error)
        flush()
    }

    /// Ends the sync session, if any, on its queue (after the frames it already took).
    private func endSession() {
        if let syncSession, let sessionQueues { sessionQueues.session.async { syncSession.close() } }
        syncSession = nil
        sessionQueues = nil
    }

    private func dropWatches() {
        context.watches.subtract(watches.removeAll(), ordering: .relaxed)
    }

    private func discardInput() {
        var sink = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = sink.withUnsafeMutableBytes {
                recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count > 0 { continue }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return close(failure?.error)
            }
            return
        }
    }

    /// Time-outs, called by the server a few times a second: a failed connection whose last
    /// word did not get out in time, and an idle client.
    func tick(now: Deadline) {
        guard !isClosed else { return }
        if let failure {
            if now >= failure.deadline { close(failure.error) }
            return
        }
        guard let limit = context.configuration.idleTimeoutMilliseconds else { return }
        let isIdle =
            watches.isEmpty && syncSession == nil && writesInFlight == 0 && inboxStart == inbox.count
            && outbound.isEmpty
        guard isIdle, now >= lastActivity + .milliseconds(Int64(clamping: limit)) else { return }
        fail(
            SettingsError(
                .timeout, "idle for \(Double(limit) / 1000) s: closed (reconnect to go on)"))
    }
}
