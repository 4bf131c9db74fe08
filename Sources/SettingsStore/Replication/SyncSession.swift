import Synchronization

/// One replica-to-replica exchange over a connection, independent of the transport: it is given a
/// way to send frames and an executor, and is fed the frames that arrive.
///
/// Both directions run at once: each side sends its entries after the cursor the other gave it
/// (catch-up and live changes alike), with a bounded number of batches awaiting acknowledgement,
/// and applies and acknowledges what it receives.
///
/// Unchecked Sendable: all mutable state is touched on the executor only; the store observer
/// reaches it through `execute`.
final class SyncSession: @unchecked Sendable {  // state on its executor only
    /// Batches sent but not yet acknowledged, at most.
    static let window = 4
    /// Entries in one batch, at most.
    static let batchEntries = 1_000
    /// Stored bytes in one batch, about (a larger single value still goes alone).
    static let batchBytes = 512 * 1024
    /// The largest frame on a replica connection.
    static let maximumFrameBytes = 16 << 20

    private let settings: Settings
    private let address: String
    private let send: (JSONValue) -> Void
    private let execute: (@escaping @Sendable () -> Void) -> Void
    private(set) var peer: ReplicaID?
    private var isSending = false
    private var isClosed = false
    private var sentThrough: Int64 = 0
    private var unacknowledged: [Int64] = []
    /// The peer's sequence number to reach before changes stop being announced as `initialSync`.
    private var initialSyncTarget: Int64?
    private var observation: SubscriptionToken?
    private let pumpScheduled = Atomic<Bool>(false)

    init(
        settings: Settings, address: String, send: @escaping (JSONValue) -> Void,
        execute: @escaping (@escaping @Sendable () -> Void) -> Void
    ) {
        self.settings = settings
        self.address = address
        self.send = send
        self.execute = execute
    }

    /// The connecting side's first frame.
    func hello() -> JSONValue {
        WireRequest.hello(WireRequest.Hello(replica: settings.replicaID, sequence: settings.sequence)).json(
            id: 0)
    }

    /// The accepting side: meets the peer that said `hello` and returns the answer's fields.
    func accept(hello: WireRequest.Hello) throws(SettingsError) -> [String: JSONValue] {
        try hello.checkVersion()
        guard hello.role == .replica, let replica = hello.replicaID else {
            throw SettingsError(.protocolError, "a sync session starts with a replica's hello")
        }
        let peer = try meet(replica, sequence: hello.replicaSequence)
        return [
            "version": .integer(SettingsdVersion.protocolVersion),
            "replica": .string(settings.replicaID.description),
            "cursor": .integer(settings.receivedSequence(from: peer) ?? 0),
            "sequence": .integer(settings.sequence),
        ]
    }

    /// The connecting side: reads the answer to its hello, tells the peer where to start, and
    /// starts sending.
    func accept(response: WireMessage.Incoming) throws(SettingsError) {
        guard case .response(_, let result) = response else {
            throw SettingsError(.protocolError, "expected the answer to a replica's hello, got an event")
        }
        let fields = try JSONFields(.object(try result.get()), what: "a replica hello answer")
        let peer = try meet(try fields.replicaID("replica"), sequence: try fields.integer("sequence"))
        send(ReplicationMessage.start(cursor: settings.receivedSequence(from: peer) ?? 0).json)
        startSending(after: try fields.integer("cursor"))
    }

    /// Handles a frame from the peer after the hello.
    func receive(_ json: JSONValue) throws(SettingsError) {
        guard let peer, !isClosed else {
            throw SettingsError(.protocolError, "replication frame before hello")
        }
        switch try ReplicationMessage(json: json) {
        case .start(let cursor):
            startSending(after: cursor)
        case .acknowledge(let through):
            unacknowledged.removeAll { $0 <= through }
            note(peer) { $0.acknowledgedThrough = max($0.acknowledgedThrough, through) }
            pump()
        case .replicate(let entries, let through, let sequence):
            let reason: ChangeReason
            if let target = initialSyncTarget {
                reason = .initialSync
                if through >= target { initialSyncTarget = nil }
            } else {
                reason = .replica
            }
            try settings.applyRemote(entries, from: peer, through: through, reason: reason)
            note(peer) {
                $0.receivedThrough = max($0.receivedThrough, through)
                $0.peerSequence = max($0.peerSequence, sequence)
            }
            send(ReplicationMessage.acknowledge(through: through).json)
        }
    }

    /// Ends the session: no more sends, the peer is shown disconnected.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        observation?.cancel()
        observation = nil
        if let peer { settings.peerRegistry.update(peer, address: address) { $0.isConnected = false } }
    }

    private func meet(_ peer: ReplicaID, sequence peerSequence: Int64) throws(SettingsError) -> ReplicaID {
        guard peer != settings.replicaID else {
            throw SettingsError(.protocolError, "a replica cannot sync with itself (replica \(peer))")
        }
        self.peer = peer
        if settings.receivedSequence(from: peer) == nil, peerSequence > 0 { initialSyncTarget = peerSequence }
        note(peer) {
            $0.isConnected = true
            $0.peerSequence = peerSequence
            $0.receivedThrough = self.settings.receivedSequence(from: peer) ?? 0
        }
        return peer
    }

    private func startSending(after cursor: Int64) {
        guard !isSending, let peer else { return }
        isSending = true
        sentThrough = cursor
        note(peer) {
            $0.sentThrough = cursor
            $0.acknowledgedThrough = cursor
        }
        observation = settings.observe(.all) { [weak self] _ in self?.schedulePump() }
        pump()
    }

    private func schedulePump() {
        guard !pumpScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        execute { [weak self] in
            self?.pumpScheduled.store(false, ordering: .releasing)
            self?.pump()
        }
    }

    /// Sends batches after `sentThrough` while the window allows.
    private func pump() {
        guard isSending, !isClosed, let peer else { return }
        while unacknowledged.count < Self.window {
            let candidates = settings.entries(after: sentThrough, limit: Self.batchEntries)
            guard !candidates.isEmpty else { return }
            var batch: [SettingEntry] = []
            var bytes = 0
            var through = sentThrough
            for entry in candidates {
                bytes += entry.key.utf8.count + (entry.value?.storageSize ?? 0) + 64
                if bytes > Self.batchBytes, !batch.isEmpty { break }
                through = entry.sequence
                // The peer wrote these itself: it has them.
                guard entry.version.replica != peer else { continue }
                // A value stored before the depth limit existed could not be parsed by the peer and
                // would wedge the link: it stays local, and the rest flows on.
                if let value = entry.value, value.nestingDepth > SettingValue.maximumNestingDepth { continue }
                batch.append(entry)
            }
            send(
                ReplicationMessage.replicate(entries: batch, through: through, sequence: settings.sequence)
                    .json)
            sentThrough = through
            unacknowledged.append(through)
            note(peer) { $0.sentThrough = through }
        }
    }

    private func note(_ peer: ReplicaID, _ change: (inout PeerStatus) -> Void) {
        settings.peerRegistry.update(peer, address: address) { status in
            status.lastContactMilliseconds = settings.configuration.clock()
            change(&status)
        }
    }
}
