package import SettingsStore
package import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The handshake: the dialling side's hello, the accepting side's `Welcome`, and meeting the
/// peer (its lineage checked against what this replica remembers of it, its role in the registry).
extension SyncSession {
    /// The connecting side's first frame.
    func hello() -> JSONValue {
        localID = settings.replicaID
        var hello = WireRequest.Hello(
            replica: localID, sequence: settings.sequence, clockMilliseconds: settings.configuration.clock(),
            lineage: settings.lineage, tombstoneHorizon: settings.tombstoneHorizon, account: settings.account)
        // An app's store with no name of its own goes by its program's.
        hello.name =
            settings.replicaName
            ?? ChangeActor.current.executable?.split(separator: "/").last.map(String.init)
        return WireRequest.hello(hello).json(id: 0)
    }

    /// The accepting side: meets the peer that said `hello` and returns the answer's fields.
    ///
    /// - Throws: `replicaForked` when the peer's history does not continue what this replica
    ///   received from it, or another live replica holds its id (the peer takes a new id).
    package func accept(hello: WireRequest.Hello) throws(SettingsError) -> [String: JSONValue] {
        try hello.checkVersion()
        guard hello.role == .replica, let replica = hello.replicaID else {
            throw SettingsError(.protocolError, "a sync session starts with a replica's hello")
        }
        localID = settings.replicaID
        let peer = try meet(
            replica, sequence: hello.replicaSequence, clock: hello.clockMilliseconds, lineage: hello.lineage,
            account: hello.account)
        peerHorizon = hello.tombstoneHorizon ?? .zero
        if let name = hello.name { settings.setName(name, ofReplica: peer) }
        var state = Welcome.ReplicaState(
            cursor: settings.receivedSequence(from: peer) ?? 0, sequence: settings.sequence,
            clockMilliseconds: settings.configuration.clock(), lineage: settings.lineage,
            tombstoneHorizon: settings.tombstoneHorizon, account: settings.account)
        state.name = settings.replicaName
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
                lineage: state.lineage, account: state.account)
            if let name = state.name { settings.setName(name, ofReplica: peer) }
        } catch  where error.code == .replicaForked {
            // The peer's history forked: it must take a new id, and learns so from here.
            send(.forked(reason: error.message))
            throw error
        }
        peerHorizon = state.tombstoneHorizon
        send(.start(cursor: settings.receivedSequence(from: peer) ?? 0))
        try startSending(after: state.cursor)
    }

    /// Checks the peer against what this replica remembers of it, meets its account (this
    /// replica follows the peer's account change, or the peer follows this one's) and joins it to
    /// the registry.
    private func meet(
        _ peer: ReplicaID, sequence: Int64, clock: UInt64?, lineage: Lineage?, account: SyncAccount?
    )
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
        // A cursor recorded from the peer's running incarnation is the same live process: its
        // hello may be older than entries it wrote since, which its other connection to this
        // replica delivered first. Only another incarnation can have forked from it.
        if let lineage, let record = settings.record(of: peer), record.incarnation != lineage.current.id,
            !lineage.continues(
                cursor: record.receivedSequence, recordedUnder: record.incarnation, sequence: sequence)
        {
            throw SettingsError(
                .replicaForked,
                "replica \(peer) does not continue the history this replica received from it (restored from a backup, or a copied file): it takes a new replica id"
            )
        }
        if case .changed(let previous, let forgotten) = try settings.meet(account: account),
            let account
        {
            logger?.log(
                .warning,
                "replica \(peer) at \(address) syncs as hub namespace \(account.namespace), which this replica's account (\(previous)) moved to: an account change; \(forgotten) synced keys of the old account were cleared"
            )
            // Sessions still on the old account end; their peers follow in their next hello.
            registry.closeAllSessions()
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
        if offset.magnitude > settings.configuration.maximumClockSkewMilliseconds {
            logger?.log(
                .warning,
                "replica \(peer) at \(address): its clock is \(offset / 1000) s \(offset > 0 ? "ahead of" : "behind") this one, beyond the \(settings.configuration.maximumClockSkewMilliseconds / 1000) s bound; writes still order correctly, but check both clocks"
            )
        }
        note(peer) {
            $0.peerSequence = sequence
            $0.receivedThrough = self.settings.receivedSequence(from: peer) ?? 0
            $0.clockOffsetMilliseconds = offset
        }
        return peer
    }
}
