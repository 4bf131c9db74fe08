/// What a replica knows about one of its peers.
public struct PeerStatus: Sendable, Equatable {
    /// Whether two connected replicas were last found to hold the same entries.
    public enum Agreement: Sendable, Equatable, CustomStringConvertible {
        /// Not compared yet on this connection (or changes happened since).
        case unknown
        /// A comparison is under way.
        case checking
        /// Their digests were equal when last compared with nothing in flight.
        case agreed
        /// The last comparison found `keys` entries that differed; they were repaired, and the
        /// next comparison will tell whether the replicas agree now.
        case diverged(keys: Int)

        /// `agreed`, `diverged (3 keys)`, `checking` or `unknown`.
        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .checking: "checking"
            case .agreed: "agreed"
            case .diverged(let keys): "diverged (\(keys) keys)"
            }
        }
    }

    /// The peer's replica id.
    public let replica: ReplicaID
    /// The socket this replica dials for it, or `incoming` for a peer that connected here.
    public var address: String
    /// How many sync connections to it are open now (two when both sides dial each other).
    package var connectionCount: Int
    /// When the peer last said anything, in milliseconds since 1970.
    public var lastContactMilliseconds: UInt64
    /// The last local sequence number sent to the peer (or skipped because it has the entries).
    package var sentThrough: Int64
    /// The last local sequence number the peer has made durable (or needs nothing up to).
    package var acknowledgedThrough: Int64
    /// The last of the peer's sequence numbers applied here.
    package var receivedThrough: Int64
    /// How far the peer's log goes that it may still send here, as it last announced.
    package var peerSequence: Int64
    /// The outcome of the last anti-entropy comparison.
    public var agreement: Agreement
    /// The peer's wall clock minus this one's, in milliseconds, measured at the hello.
    package var clockOffsetMilliseconds: Int64
    /// Keys anti-entropy found different with this peer and repaired, during this run.
    package var repairedKeys: Int
    /// Keys whose entry from the peer this replica refused at the last agreement (its schemas,
    /// its limits, the arrival gate): left out of the comparison, so they do not stop agreement.
    package var refusedKeys = 0
    /// Entries received from the peer stamped further ahead of this replica's clock than
    /// `SettingsConfiguration.maximumClockSkew` (applied, but not allowed to move the clock).
    package var entriesAheadOfClock: Int
    /// Why this replica cannot store the peer's changes now (its disk is full), while it cannot.
    package var cannotStore: String?
    /// Why the peer cannot store this replica's changes now, as it said, while it cannot.
    package var peerCannotStore: String?

    /// Why changes between the two are not being stored, while they are not.
    package var lastError: String? {
        if let cannotStore { return "cannot store its changes here: \(cannotStore)" }
        if let peerCannotStore { return "it cannot store this replica's changes: \(peerCannotStore)" }
        return nil
    }

    /// Whether a sync connection is open now.
    public var isConnected: Bool { connectionCount > 0 }

    /// Local changes (by sequence number) the peer has not acknowledged yet.
    package func pendingOutgoing(localSequence: Int64) -> Int64 {
        max(0, localSequence - acknowledgedThrough)
    }

    /// The peer's changes (by sequence number) not applied here yet.
    public var pendingIncoming: Int64 { max(0, peerSequence - receivedThrough) }

    package init(replica: ReplicaID, address: String) {
        self.replica = replica
        self.address = address
        connectionCount = 0
        lastContactMilliseconds = 0
        sentThrough = 0
        acknowledgedThrough = 0
        receivedThrough = 0
        peerSequence = 0
        agreement = .unknown
        clockOffsetMilliseconds = 0
        repairedKeys = 0
        entriesAheadOfClock = 0
    }
}
