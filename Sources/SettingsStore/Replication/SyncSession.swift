import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One replica-to-replica exchange over a connection, independent of the transport: it is given a
/// way to send frames, an executor and a way to end the connection, and is fed the frames that
/// arrive.
///
/// Both directions run at once: each side sends its entries after the cursor the other gave it
/// (catch-up and live changes alike), with a bounded number of batches awaiting acknowledgement,
/// and applies and acknowledges what it receives. Once nothing is in flight, the replicas compare
/// digests and repair what differs (`SyncSession+AntiEntropy.swift`).
///
/// Unchecked Sendable: all mutable state is touched on the executor only; the peer registry
/// (which relays the store's commit notices) reaches it through `execute`.
final class SyncSession: @unchecked Sendable {  // state on its executor only
    /// Batches sent but not yet acknowledged, at most.
    static let window = 4
    /// Entries in one batch, at most.
    static let batchEntries = 1_000
    /// Stored bytes in one batch, about (a larger single value still goes alone).
    static let batchBytes = 512 * 1024
    /// The largest frame on a replica connection.
    static let maximumFrameBytes = 16 << 20

    let settings: Settings
    /// The replicator's registry: this session's peer, its sender role, its neighbours.
    let registry: PeerRegistry
    let address: String
    let logger: SettingsLogger?
    private let sendFrame: (JSONValue) -> Void
    private let execute: (@escaping @Sendable () -> Void) -> Void
    private let end: @Sendable (SettingsError) -> Void

    /// The peer, once met.
    private(set) var peer: ReplicaID?
    /// The peer's running incarnation, from its hello.
    private(set) var peerIncarnation: UUID?
    /// This replica's id when the session began; the session ends if it changes.
    private(set) var localID: ReplicaID
    /// Where the session stands (`SyncSession+Phase.swift`).
    var phase = Phase.greeting
    /// Where the peer asked this side to start.
    var startCursor: Int64 = 0
    /// The stamp below which the peer has collected tombstones.
    var peerHorizon = HybridTimestamp.zero
    var sentThrough: Int64 = 0
    /// Windows sent or skipped, in order, until acknowledged; skipped ones need no answer.
    var inFlight: [(through: Int64, isSent: Bool)] = []
    /// The replicas the peer is connected to besides this one: it has their own writes.
    var neighbours: Set<ReplicaID> = []
    /// The neighbour list last sent to the peer.
    var announcedNeighbours: [ReplicaID]?
    /// The peer's sequence number to reach before changes stop being announced as `initialSync`.
    private var initialSyncTarget: Int64?
    private let pumpScheduled = Atomic<Bool>(false)
    /// Set once a warning about received stamps far ahead has been logged.
    private var warnedAhead = false
    /// Where anti-entropy stands (`SyncSession+AntiEntropy.swift`).
    var check = Check.idle

    init(
        settings: Settings, registry: PeerRegistry, address: String, logger: SettingsLogger?,
        send: @escaping (JSONValue) -> Void,
        execute: @escaping (@escaping @Sendable () -> Void) -> Void,
        end: @escaping @Sendable (SettingsError) -> Void
    ) {
        self.settings = settings
        self.registry = registry
        self.address = address
        self.logger = logger
        self.sendFrame = send
        self.execute = execute
        self.end = end
        self.localID = settings.replicaID
    }

    /// Sends a message to the peer.
    func send(_ message: ReplicationMessage) {
        guard !isClosed else { return }
        sendFrame(message.json)
    }

    /// Runs `task` on the executor after `seconds`.
    func after(_ seconds: Double, _ task: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in self?.execute(task) }
    }

    /// Runs `task` on the executor.
    func onExecutor(_ task: @escaping @Sendable () -> Void) {
        execute(task)
    }

    // MARK: Handshake

    /// The connecting side's first frame.
    func hello() -> JSONValue {
        localID = settings.replicaID
        let hello = WireRequest.Hello(
            replica: localID, sequence: settings.sequence, clockMilliseconds: settings.configuration.clock(),
            lineage: settings.lineage, tombstoneHorizon: settings.tombstoneHorizon)
        return WireRequest.hello(hello).json(id: 0)
    }

    /// The accepting side: meets the peer that said `hello` and returns the answer's fields.
    ///
    /// - Throws: `replicaForked` when the peer's history does not continue what this replica
    ///   received from it, or another live replica holds its id (the peer takes a new id).
    func accept(hello: WireRequest.Hello) throws(SettingsError) -> [String: JSONValue] {
        try hello.checkVersion()
        guard hello.role == .replica, let replica = hello.replicaID else {
            throw SettingsError(.protocolError, "a sync session starts with a replica's hello")
        }
        localID = settings.replicaID
        let peer = try meet(
            replica, sequence: hello.replicaSequence, clock: hello.clockMilliseconds, lineage: hello.lineage)
        peerHorizon = hello.tombstoneHorizon ?? .zero
        let state = Welcome.ReplicaState(
            cursor: settings.receivedSequence(from: peer) ?? 0, sequence: settings.sequence,
            clockMilliseconds: settings.configuration.clock(), lineage: settings.lineage,
            tombstoneHorizon: settings.tombstoneHorizon)
        return Welcome(replica: localID, state: state).fields
    }

    /// The connecting side: reads the answer to its hello, tells the peer where to start, and
    /// starts sending. A refusal saying this replica forked makes it take a new id first (it then
    /// reconnects under it, and every peer resyncs with it).
    ///
    /// - Throws: The peer's refusal (`replicaForked` means this replica took a new id), or
    ///   `replicaForked` after telling the peer that its own history forked.
    func accept(response: WireMessage.Incoming) throws(SettingsError) {
        guard case .response(_, let result) = response else {
            throw SettingsError(.protocolError, "expected the answer to a replica's hello, got an event")
        }
        let answer: WireAnswer
        switch result {
        case .success(let fields):
            answer = fields
        case .failure(let error):
            if error.code == .replicaForked {
                logger?.log(.warning, "the replica at \(address) found this replica forked: \(error.message)")
                if let id = try settings.takeNewIdentity(ifStill: localID) {
                    logger?.log(
                        .warning, "this replica is now \(id); every peer resyncs with it, nothing is lost")
                }
            }
            throw error
        }
        let welcome = try Welcome(fields: JSONFields(answer.members), role: .replica, address: address)
        guard let state = welcome.replicaState else {
            throw SettingsError(
                .protocolError, "the replica at '\(address)' answered as a daemon, not a replica")
        }
        let peer: ReplicaID
        do throws(SettingsError) {
            peer = try meet(
                welcome.replica, sequence: state.sequence, clock: state.clockMilliseconds,
                lineage: state.lineage)
        } catch  where error.code == .replicaForked {
            // The peer's history forked: it must take a new id, and learns so from here.
            send(.forked(reason: error.message))
            throw error
        }
        peerHorizon = state.tombstoneHorizon
        send(.start(cursor: settings.receivedSequence(from: peer) ?? 0))
        try startSending(after: state.cursor)
    }

    /// Checks the peer against what this replica remembers of it and joins it to the registry.
    private func meet(_ peer: ReplicaID, sequence: Int64, clock: UInt64?, lineage: Lineage?)
        throws(SettingsError)
        -> ReplicaID
    {
        // A connection that ended while the hello was on its way must not join the registry.
        guard phase == .greeting else {
            throw SettingsError(
                isClosed ? .connectionLost : .protocolError,
                isClosed ? "the connection closed during the hello" : "a second hello in one session")
        }
        guard peer != localID else {
            throw SettingsError(.protocolError, "a replica cannot sync with itself (replica \(peer))")
        }
        if let lineage, let record = settings.record(of: peer),
            !lineage.continues(
                cursor: record.receivedSequence, recordedUnder: record.incarnation, sequence: sequence)
        {
            throw SettingsError(
                .replicaForked,
                "replica \(peer) does not continue the history this replica received from it (restored from a backup, or a copied file): it takes a new replica id"
            )
        }
        let attachment = registry.attach(
            session: ObjectIdentifier(self), to: peer, incarnation: lineage?.current.id, address: address,
            close: { [weak self] in
                self?.endSoon(SettingsError(.connectionLost, "this replica took a new id"))
            },
            promote: { [weak self] in
                guard let session = self else { return }
                session.onExecutor { session.promote() }
            },
            nudge: { [weak self] kind in self?.storeCommitted(kind) })
        guard attachment != .conflict else {
            throw SettingsError(
                .replicaForked,
                "replica \(peer) is already connected as another incarnation: two live replicas share its id (a copied database file); the newcomer takes a new replica id"
            )
        }
        self.peer = peer
        peerIncarnation = lineage?.current.id
        phase = .met(isSender: attachment == .sender)
        if settings.receivedSequence(from: peer) == nil, sequence > 0 { initialSyncTarget = sequence }
        let offset = clock.map { Int64(clamping: $0) - Int64(clamping: settings.configuration.clock()) } ?? 0
        if offset.magnitude > settings.configuration.maximumClockSkew {
            logger?.log(
                .warning,
                "replica \(peer) at \(address): its clock is \(offset / 1000) s \(offset > 0 ? "ahead of" : "behind") this one, beyond the \(settings.configuration.maximumClockSkew / 1000) s bound; writes still order correctly, but check both clocks"
            )
        }
        note(peer) {
            $0.peerSequence = sequence
            $0.receivedThrough = self.settings.receivedSequence(from: peer) ?? 0
            $0.clockOffsetMilliseconds = offset
        }
        return peer
    }

    // MARK: Receiving

    /// Handles a frame from the peer after the hello.
    func receive(_ json: JSONValue) throws(SettingsError) {
        try receive(ReplicationMessage(json: json))
    }

    /// Handles one decoded frame from the peer (see `receive(_:)` for JSON).
    func receive(_ message: ReplicationMessage) throws(SettingsError) {
        guard let peer, phase != .greeting, !isClosed else {
            throw SettingsError(.protocolError, "replication frame before hello")
        }
        guard settings.replicaID == localID else {
            throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
        }
        switch message {
        case .start(let cursor):
            guard case .met = phase else {
                throw SettingsError(.protocolError, "a 'start' frame after sending began")
            }
            try startSending(after: cursor)
        case .acknowledge(let through, let settled):
            acknowledge(through: through)
            noteSettled(settled, from: peer)
        case .replicate(let entries, let through, let sequence):
            try apply(entries, through: through, sequence: sequence, from: peer)
        case .neighbours(let replicas):
            neighbours = Set(replicas).subtracting([localID])
        case .forked(let reason):
            // A dialling peer that found this replica forked says so in place of `start`.
            guard case .met = phase else {
                throw SettingsError(.protocolError, "a 'forked' frame is only valid in place of 'start'")
            }
            logger?.log(.warning, "replica \(peer) at \(address) found this replica forked: \(reason)")
            if let id = try settings.takeNewIdentity(ifStill: localID) {
                logger?.log(
                    .warning, "this replica is now \(id); every peer resyncs with it, nothing is lost")
            }
            throw SettingsError(.connectionLost, "this replica took a new id; reconnecting")
        case .check(let digest, let settled):
            noteSettled(settled, from: peer)
            answerCheck(digest: digest)
        case .agreed(let settled):
            noteSettled(settled, from: peer)
            conclude(differing: 0, with: peer)
        case .busy:
            retryCheckLater()
        case .buckets(let sums):
            compareBuckets(sums)
        case .repair(let buckets, let entries, let final, let applied):
            try repair(buckets: buckets, entries: entries, final: final, applied: applied, from: peer)
        }
    }

    private func apply(_ entries: [SettingEntry], through: Int64, sequence: Int64, from peer: ReplicaID)
        throws(SettingsError)
    {
        let reason: ChangeReason
        if let target = initialSyncTarget {
            reason = .initialSync
            if through >= target { initialSyncTarget = nil }
        } else {
            reason = .replica
        }
        let outcome = try settings.applyRemote(
            entries, from: peer, through: through, reason: reason, peerIncarnation: peerIncarnation)
        if outcome.aheadOfClock > 0, !warnedAhead {
            warnedAhead = true
            logger?.log(
                .warning,
                "replica \(peer) at \(address) sent entries stamped more than \(settings.configuration.maximumClockSkew / 1000) s ahead of this clock; they are applied but do not move it, and later writes here still win"
            )
        }
        note(peer) {
            $0.receivedThrough = max($0.receivedThrough, through)
            $0.peerSequence = max($0.receivedThrough, sequence)
            $0.entriesAheadOfClock += outcome.aheadOfClock
        }
        send(.acknowledge(through: through, settled: settled))
    }

    /// How far this side's own log is settled for the peer (sent and acknowledged, or skipped
    /// because the peer has those entries), told in acks and anti-entropy frames so that skipped
    /// windows need no empty batch to move the peer's cursor.
    var settled: Int64 {
        guard let peer else { return 0 }
        return registry.status(of: peer)?.acknowledgedThrough ?? 0
    }

    private func noteSettled(_ settled: Int64, from peer: ReplicaID) {
        guard settled > 0 else { return }
        settings.noteSettled(from: peer, through: settled, incarnation: peerIncarnation)
    }

    // MARK: Ending

    /// Ends the session: no more sends, and the peer is shown disconnected once no other
    /// connection to it is open.
    func close() {
        guard !isClosed else { return }
        phase = .closed
        if let peer { registry.detach(session: ObjectIdentifier(self), from: peer) }
    }

    /// Ends the connection from any thread.
    func endSoon(_ error: SettingsError) {
        end(error)
    }

    // MARK: Shared

    /// The store committed (the registry relays its notice, from any thread): new changes are
    /// sent, and agreement is re-checked; a policy change makes the last verdict stale although
    /// no sequence number moved (a key's scope changes what the digests cover).
    private func storeCommitted(_ kind: CommitNotice.Kind) {
        guard kind == .policy else {
            schedulePump()
            return
        }
        execute { [weak self] in
            guard let self, let peer = self.peer else { return }
            if case .agreed = self.check { self.check = .idle }
            self.note(peer) { if $0.agreement != .checking { $0.agreement = .unknown } }
            self.pump()
        }
    }

    /// Runs `pump()` soon on the executor, once however many commits ask for it.
    func schedulePump() {
        guard !pumpScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        execute { [weak self] in
            self?.pumpScheduled.store(false, ordering: .releasing)
            self?.pump()
        }
    }

    /// Updates what the registry shows of `peer`.
    func note(_ peer: ReplicaID, _ change: (inout PeerStatus) -> Void) {
        registry.update(peer, address: address) { status in
            status.lastContactMilliseconds = settings.configuration.clock()
            change(&status)
        }
    }
}
