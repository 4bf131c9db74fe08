import SettingsStore
import SettingsWire

extension SyncSession {
    /// Where a session stands. Frames are valid only in some phases: `start` and `forked` only
    /// while `met` (one replaces the other), replication frames only once the peer is met.
    enum Phase: Equatable {
        /// Waiting for the hello (accepting side) or for its answer (dialling side).
        case greeting
        /// The peer is met; sending has not begun (the accepting side waits for `start`).
        /// `isSender`: whether this connection will carry this replica's changes to the peer.
        case met(isSender: Bool)
        /// Sending: this session carries this replica's changes to the peer.
        case sending
        /// Another connection to the same peer sends; this one only receives until promoted.
        case standby
        /// Ended: nothing more is sent or applied.
        case closed
    }

    /// Where anti-entropy stands between this replica and the peer.
    enum Check: Equatable {
        /// No verdict stands (nothing compared yet, or something changed since).
        case idle
        /// A comparison starts once changes settle (`checkDelay`).
        case scheduled
        /// A comparison of this digest (counting refused entries) is under way.
        case comparing(digest: UInt64)
        /// The peer was found to agree when this replica's sequence number and digest were these.
        case agreed(atSequence: Int64, digest: UInt64)
    }

    /// Whether the session has ended.
    package var isClosed: Bool { phase == .closed }

    /// Whether sending has begun, here or on the peer's other connection (`start` received, or
    /// the hello answered).
    var isStarted: Bool { phase == .sending || phase == .standby }

    /// Whether this session sends this replica's changes.
    var isSending: Bool { phase == .sending }
}
