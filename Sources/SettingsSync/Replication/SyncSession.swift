import Dispatch
package import SettingsStore
import SettingsWire
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    package import Foundation
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
package final class SyncSession: @unchecked Sendable {  // state on its executor only
    /// Batches sent but not yet acknowledged, at most.
    static let window = 4
    /// Entries in one batch, at most. Each batch is one transaction on the receiver, with a
    /// commit, an acknowledgement and a round of change events of its own: 4,000 took an initial
    /// sync of 100,000 keys between two daemons from ~0.32–0.38 to ~0.30–0.31 s against 1,000
    /// (2,000 and 8,000 were no better). A receiver holds its store's write lock for a whole
    /// commit, so while local writes are recent it commits a batch in parts (`partEntries`).
    static let batchEntries = 4_000
    /// Entries in one commit on the receiving side while its store has local writes (one asked
    /// for the writer within `localWriteWindow` milliseconds): a local set then waits behind one
    /// part, not a whole batch (p99 ~15–22 ms behind whole batches of 4,000 during an initial
    /// sync, `settings-bench sync --only writes`). Only the last part moves the peer's cursor.
    static let partEntries = 1_000
    /// How recent, in milliseconds, a local write must be for batches to be committed in parts.
    static let localWriteWindow: UInt64 = 250
    /// Stored bytes in one batch, about (a larger single value still goes alone).
    static let batchBytes = 2 << 20
    /// The largest frame on a replica connection.
    package static let maximumFrameBytes = 16 << 20

    let settings: Settings
    /// The replicator's registry: this session's peer, its sender role, its neighbours.
    let registry: PeerRegistry
    let address: String
    let logger: SettingsLogger?
    private let sendFrame: (ReplicationMessage) -> Void
    private let execute: (@escaping @Sendable () -> Void) -> Void
    private let end: @Sendable (SettingsError) -> Void

    /// The peer, once met.
    package var peer: ReplicaID?
    /// The peer's running incarnation, from its hello.
    var peerIncarnation: UUID?
    /// This replica's id when the session began; the session ends if it changes.
    var localID: ReplicaID
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
    var initialSyncTarget: Int64?
    private let pumpScheduled = Atomic<Bool>(false)
    /// Set once a warning about received stamps far ahead has been logged.
    private var warnedAhead = false
    /// Where anti-entropy stands (`SyncSession+AntiEntropy.swift`).
    var check = Check.idle
    /// What the peer sent that this replica refused and does not hold, for anti-entropy.
    var refused = RefusedEntries()
    /// Set when this side could not store a batch or repair: what the peer sends is dropped
    /// until it says `retry` (everything it sent meanwhile comes again after it).
    var isRefusingBatches = false
    /// Set when the peer could not store what this side sent: nothing is sent until the retry.
    var isHeldBack = false
    /// How long the next retry after a refusal waits, in seconds (doubling up to `longestRetry`).
    var retryDelay = 0.0
    /// The longest wait between retries of a batch the peer could not store, in seconds.
    static let longestRetry = 10.0

    package init(
        settings: Settings, registry: PeerRegistry, address: String, logger: SettingsLogger?,
        send: @escaping (ReplicationMessage) -> Void,
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
        sendFrame(message)
    }

    /// Runs `task` on the executor after `seconds`.
    func after(_ seconds: Double, _ task: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in self?.execute(task) }
    }

    /// Runs `task` on the executor.
    func onExecutor(_ task: @escaping @Sendable () -> Void) {
        execute(task)
    }

    /// Handles a frame from the peer after the hello, as its text.
    func receive(frame: ArraySlice<UInt8>) throws(SettingsError) {
        try receive(ReplicationMessage(frame: frame))
    }

    /// Handles one decoded frame from the peer (see `receive(frame:)` for its text).
    package func receive(_ message: ReplicationMessage) throws(SettingsError) {
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
        case .refused(let reason):
            peerRefused(reason, peer: peer)
        case .retry:
            isRefusingBatches = false
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
            conclude(differing: 0, answererAgreed: true, with: peer)
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
        // After a refusal, batches already on their way are dropped: they come again after `retry`.
        guard !isRefusingBatches else { return }
        do throws(SettingsError) {
            try store(entries, through: through, sequence: sequence, from: peer)
        } catch  where error.isStorageFailure {
            refuse(error, from: peer, sequence: sequence)
        }
    }

    private func store(_ entries: [SettingEntry], through: Int64, sequence: Int64, from peer: ReplicaID)
        throws(SettingsError)
    {
        // Still the initial sync until a batch reaching the target is stored.
        let reason: ChangeReason = initialSyncTarget == nil ? .replica : .initialSync
        var ahead = 0
        var start = 0
        repeat {
            // Decided part by part: a local write that waited behind this part splits the rest.
            let split =
                entries.count - start > Self.partEntries
                && settings.hasLocalWrites(withinMilliseconds: Self.localWriteWindow)
            let end = split ? start + Self.partEntries : entries.count
            let part = start == 0 && end == entries.count ? entries : Array(entries[start..<end])
            // Parts before the last move no cursor: after a crash between them the peer sends
            // the batch again, and what was applied already changes nothing.
            let outcome = try settings.applyRemote(
                part, from: peer, through: end == entries.count ? through : nil, reason: reason,
                peerIncarnation: peerIncarnation)
            noteRefusals(outcome, of: part, from: peer)
            ahead += outcome.aheadOfClock
            start = end
        } while start < entries.count
        if ahead > 0, !warnedAhead {
            warnedAhead = true
            logger?.log(
                .warning,
                "replica \(peer) at \(address) sent entries stamped more than \(settings.configuration.maximumClockSkewMilliseconds / 1000) s ahead of this clock; they are applied but do not move it, and later writes here still win"
            )
        }
        if let target = initialSyncTarget, through >= target { initialSyncTarget = nil }
        note(peer) {
            $0.receivedThrough = max($0.receivedThrough, through)
            $0.peerSequence = max($0.receivedThrough, sequence)
            $0.entriesAheadOfClock += ahead
            $0.cannotStore = nil
        }
        send(.acknowledge(through: through, settled: settled))
    }

    /// This replica could not store what `peer` sent (its disk is full, its file read-only):
    /// nothing of it moved the cursor; the peer is told why, and resends later. The session stays
    /// up, so both sides show the reason and `sync --wait` names it.
    func refuse(_ error: SettingsError, from peer: ReplicaID, sequence: Int64) {
        isRefusingBatches = true
        let logged = registry.status(of: peer)?.cannotStore
        note(peer) {
            $0.cannotStore = error.message
            $0.peerSequence = max($0.peerSequence, sequence)
        }
        if logged != error.message {
            logger?.log(
                .warning,
                "cannot store the changes replica \(peer) at \(address) sends: \(error.message); it resends them later"
            )
        }
        send(.refused(reason: error.message))
    }

    /// The peer could not store what this side sent: everything after its acknowledged position
    /// goes again after a growing wait, preceded by `retry`.
    private func peerRefused(_ reason: String, peer: ReplicaID) {
        if case .comparing = check { check = .idle }
        let logged = registry.status(of: peer)?.peerCannotStore
        if logged != reason {
            logger?.log(
                .warning, "replica \(peer) at \(address) cannot store this replica's changes: \(reason)")
        }
        let acknowledged = max(startCursor, registry.status(of: peer)?.acknowledgedThrough ?? 0)
        if isSending {
            sentThrough = acknowledged
            inFlight = []
        }
        note(peer) {
            $0.peerCannotStore = reason
            if self.isSending { $0.sentThrough = acknowledged }
        }
        guard !isHeldBack else { return }
        isHeldBack = true
        retryDelay = min(max(retryDelay * 2, 0.5), Self.longestRetry)
        after(retryDelay) { [weak self] in
            guard let self, self.isHeldBack, !self.isClosed else { return }
            self.isHeldBack = false
            self.send(.retry)
            self.pump()
        }
    }

    /// Logs the entries of a batch from `peer` that the arrival gate refused, and remembers
    /// every entry of it this replica did not take (the gate, its schemas, its limits).
    func noteRefusals(_ outcome: RemoteBatchOutcome, of entries: [SettingEntry], from peer: ReplicaID) {
        if outcome.rejected > 0 {
            logger?.log(
                .warning,
                "refused \(outcome.rejected) entr\(outcome.rejected == 1 ? "y" : "ies") from replica \(peer) at \(address): \(outcome.firstRejection ?? "")"
            )
        }
        guard outcome.applied < entries.count else { return }
        let (changed, local) = refused.record(entries, in: settings)
        if changed, case .agreed = check {
            // What this side counts in the peer's place moved, though its own digest did not:
            // the verdict is stale, and only a comparison tells (this side may be the one to start it).
            check = .idle
            note(peer) { if $0.agreement != .checking { $0.agreement = .unknown } }
            scheduleCheck()
        }
        if !local.isEmpty {
            let names = local.prefix(5).map { "'\($0)'" }.joined(separator: ", ")
            logger?.log(
                .info,
                "replica \(peer) at \(address) shares \(local.count) key(s) that this replica's schemas keep local (\(names)\(local.count > 5 ? ", …" : "")): not taken; the pair agrees without them"
            )
        }
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

    /// Ends the session: no more sends, and the peer is shown disconnected once no other
    /// connection to it is open.
    package func close() {
        guard !isClosed else { return }
        phase = .closed
        if let peer { registry.detach(session: ObjectIdentifier(self), from: peer) }
    }

    /// Ends the connection from any thread.
    func endSoon(_ error: SettingsError) {
        end(error)
    }

    /// The store committed (the registry relays its notice, from any thread): new changes are
    /// sent, and agreement is re-checked; a policy change makes the last verdict stale although
    /// no sequence number moved (a key's scope changes what the digests cover).
    func storeCommitted(_ kind: CommitNotice.Kind) {
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
