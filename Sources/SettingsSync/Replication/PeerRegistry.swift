import SettingsStore
import SettingsWire
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The peers of one replicator as its sync sessions see them, read by `status`; the open
/// sessions, so that a commit can wake them and a change of identity close them all; the links it
/// dials; and, per peer, which session sends, so that two connections to one peer (both sides
/// dialling) never carry the same change twice.
package final class PeerRegistry: Sendable {
    /// How a session joined its peer.
    enum Attachment: Equatable {
        /// It sends this replica's changes to the peer.
        case sender
        /// Another session to the same peer sends; this one only receives until promoted.
        case standby
        /// The peer is already connected as another incarnation: two live replicas claim its id.
        case conflict
    }

    private struct Senders {
        var incarnation: UUID?
        var active: ObjectIdentifier?
        var standbys: [(session: ObjectIdentifier, promote: @Sendable () -> Void)] = []
    }

    private struct Session {
        let close: @Sendable () -> Void
        let nudge: @Sendable (CommitNotice.Kind) -> Void
    }

    private struct State {
        var peers: [ReplicaID: PeerStatus] = [:]
        var senders: [ReplicaID: Senders] = [:]
        var sessions: [ObjectIdentifier: Session] = [:]
        var links: [String: LinkStatus] = [:]
    }

    private let state = Mutex(State())

    /// Changes what is known of `peer`.
    func update(_ peer: ReplicaID, address: String, _ change: (inout PeerStatus) -> Void) {
        state.withLock { state in
            var status = state.peers[peer] ?? PeerStatus(replica: peer, address: address)
            change(&status)
            state.peers[peer] = status
        }
    }

    /// Every peer seen during this run, by id.
    var all: [PeerStatus] {
        state.withLock { Array($0.peers.values) }.sorted { $0.replica < $1.replica }
    }

    /// What is known of `peer`, if it was seen during this run.
    func status(of peer: ReplicaID) -> PeerStatus? {
        state.withLock { $0.peers[peer] }
    }

    /// The peers with an open connection now.
    var connected: [ReplicaID] {
        state.withLock { $0.peers.values.filter(\.isConnected).map(\.replica) }.sorted()
    }

    /// Joins a session to `peer`: the first one sends, later ones of the same incarnation wait
    /// as standbys (`promote` is called when the sender leaves), and one of another incarnation
    /// is a conflict and is not joined. Every session is nudged when the set of connected peers
    /// changes (it tells its peer), and closed by `closeAllSessions()`.
    func attach(
        session: ObjectIdentifier, to peer: ReplicaID, incarnation: UUID?, address: String,
        close: @escaping @Sendable () -> Void, promote: @escaping @Sendable () -> Void,
        nudge: @escaping @Sendable (CommitNotice.Kind) -> Void
    ) -> Attachment {
        let attachment = state.withLock { state -> Attachment in
            var senders = state.senders[peer] ?? Senders()
            if senders.active != nil, let incarnation, let current = senders.incarnation,
                current != incarnation
            {
                return .conflict
            }
            state.sessions[session] = Session(close: close, nudge: nudge)
            var status = state.peers[peer] ?? PeerStatus(replica: peer, address: address)
            status.connectionCount += 1
            if status.connectionCount == 1 { status.address = address }
            state.peers[peer] = status
            defer { state.senders[peer] = senders }
            senders.incarnation = incarnation ?? senders.incarnation
            guard senders.active == nil else {
                senders.standbys.append((session, promote))
                return .standby
            }
            senders.active = session
            return .sender
        }
        if attachment != .conflict { nudgeSessions() }
        return attachment
    }

    /// Wakes every session: a commit (`kind` says what it changed), or a change of peers
    /// (`.entries`: nothing but a look at what to send).
    func nudgeSessions(_ kind: CommitNotice.Kind = .entries) {
        for session in state.withLock({ Array($0.sessions.values) }) { session.nudge(kind) }
    }

    /// Removes a closed session; a standby to the same peer takes over sending.
    func detach(session: ObjectIdentifier, from peer: ReplicaID) {
        let promote = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.sessions.removeValue(forKey: session) != nil else { return nil }
            state.peers[peer]?.connectionCount -= 1
            if state.peers[peer]?.connectionCount == 0 { state.peers[peer]?.agreement = .unknown }
            guard var senders = state.senders[peer] else { return nil }
            defer { state.senders[peer] = senders.active == nil && senders.standbys.isEmpty ? nil : senders }
            senders.standbys.removeAll { $0.session == session }
            guard senders.active == session else { return nil }
            senders.active = nil
            guard !senders.standbys.isEmpty else { return nil }
            let next = senders.standbys.removeFirst()
            senders.active = next.session
            return next.promote
        }
        promote?()
        nudgeSessions()
    }

    /// Closes every open session (their links reconnect).
    func closeAllSessions() {
        for session in state.withLock({ Array($0.sessions.values) }) { session.close() }
    }

    /// Changes what is known of the link dialling `address`.
    func updateLink(_ address: String, _ change: (inout LinkStatus) -> Void) {
        state.withLock { state in
            var status = state.links[address] ?? LinkStatus(address: address)
            change(&status)
            state.links[address] = status
        }
    }

    /// Forgets a stopped link.
    func removeLink(_ address: String) {
        _ = state.withLock { $0.links.removeValue(forKey: address) }
    }

    /// The links this store dials, by address.
    var links: [LinkStatus] {
        state.withLock { Array($0.links.values) }.sorted { $0.address < $1.address }
    }
}
