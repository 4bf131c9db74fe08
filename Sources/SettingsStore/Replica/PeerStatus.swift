import Synchronization

/// What a replica knows about one of its peers.
public struct PeerStatus: Sendable, Equatable {
    /// The peer's replica id.
    public let replica: ReplicaID
    /// The socket this replica dials for it, or `incoming` for a peer that connected here.
    public var address: String
    /// Whether a sync connection is open now.
    public var isConnected: Bool
    /// When the peer last said anything, in milliseconds since 1970.
    public var lastContactMilliseconds: UInt64
    /// The last local sequence number sent to the peer.
    public var sentThrough: Int64
    /// The last local sequence number the peer has made durable.
    public var acknowledgedThrough: Int64
    /// The last of the peer's sequence numbers applied here.
    public var receivedThrough: Int64
    /// The peer's sequence number as it last announced it.
    public var peerSequence: Int64

    /// Local changes (by sequence number) the peer has not acknowledged yet.
    public func pendingOutgoing(localSequence: Int64) -> Int64 { max(0, localSequence - acknowledgedThrough) }

    /// The peer's changes (by sequence number) not applied here yet.
    public var pendingIncoming: Int64 { max(0, peerSequence - receivedThrough) }
}

/// The live peers of one store, updated by its sync sessions, read by `status`.
final class PeerRegistry: Sendable {
    private let peers = Mutex<[ReplicaID: PeerStatus]>([:])

    func update(_ peer: ReplicaID, address: String, _ change: (inout PeerStatus) -> Void) {
        peers.withLock { peers in
            var status =
                peers[peer]
                ?? PeerStatus(
                    replica: peer, address: address, isConnected: false, lastContactMilliseconds: 0,
                    sentThrough: 0,
                    acknowledgedThrough: 0, receivedThrough: 0, peerSequence: 0)
            change(&status)
            peers[peer] = status
        }
    }

    var all: [PeerStatus] {
        peers.withLock { Array($0.values) }.sorted { $0.replica < $1.replica }
    }
}
