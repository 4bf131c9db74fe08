import SettingsStore
import SettingsWire

/// Sending: batches after the peer's cursor, a bounded window awaiting acknowledgement, and
/// nothing the peer already has.
extension SyncSession {
    /// Begins sending after `cursor` (where the peer asked to start), if this session is the
    /// peer's sender; a standby only receives until `promote()`. Own changes the peer lacks that
    /// are older than its tombstone horizon are re-stamped first, so it takes them.
    func startSending(after cursor: Int64) throws(SettingsError) {
        guard case .met(let isSender) = phase else { return }
        phase = isSender ? .sending : .standby
        let renewed = try settings.renewOwnEntries(after: cursor, olderThan: peerHorizon)
        if renewed > 0, let peer {
            logger?.log(
                .info,
                "re-stamped \(renewed) change(s) older than replica \(peer)'s tombstone horizon, so it takes them"
            )
        }
        startCursor = cursor
        announceNeighbours()
        if isSending { beginSending(after: cursor) }
    }

    /// Takes over sending when the peer's other connection closed.
    func promote() {
        switch phase {
        case .met: phase = .met(isSender: true)
        case .standby: phase = .sending
        case .greeting, .sending, .closed: return
        }
        guard isSending, let peer else { return }
        let acknowledged = registry.status(of: peer)?.acknowledgedThrough ?? 0
        beginSending(after: max(startCursor, acknowledged))
    }

    private func beginSending(after cursor: Int64) {
        guard let peer else { return }
        sentThrough = cursor
        inFlight = []
        note(peer) {
            $0.sentThrough = cursor
            $0.acknowledgedThrough = cursor
        }
        pump()
    }

    /// The peer made everything through `through` durable.
    func acknowledge(through: Int64) {
        guard let peer else { return }
        for index in inFlight.indices where inFlight[index].through <= through {
            inFlight[index].isSent = false
        }
        settleAcknowledged(peer)
        if registry.status(of: peer)?.peerCannotStore != nil {
            retryDelay = 0
            note(peer) { $0.peerCannotStore = nil }
        }
        pump()
    }

    /// Drops the answered windows from the front and records how far the peer has everything.
    private func settleAcknowledged(_ peer: ReplicaID) {
        var settled: Int64?
        while let first = inFlight.first, !first.isSent {
            settled = first.through
            inFlight.removeFirst()
        }
        guard let settled else { return }
        note(peer) { $0.acknowledgedThrough = max($0.acknowledgedThrough, settled) }
    }

    /// Sends batches after `sentThrough` while the window allows, then tells the peer of changed
    /// neighbours and starts an anti-entropy check if everything is acknowledged.
    func pump() {
        guard !isClosed, let peer else { return }
        announceNeighbours()
        // Held back after a refusal: the retry resumes sending.
        if isSending, !isHeldBack {
            while inFlight.count(where: \.isSent) < Self.window {
                let candidates = settings.entries(after: sentThrough, limit: Self.batchEntries)
                guard !candidates.isEmpty else {
                    // Numbers no entry held at opening (rows lost from a damaged file) carry
                    // nothing: settled, or the peer would wait for them and never compare.
                    let opened = settings.openedSequence
                    if sentThrough < opened { skip(through: opened, for: peer) }
                    break
                }
                sendWindow(candidates, to: peer)
            }
        }
        noteChange()
        scheduleCheck()
    }

    private func sendWindow(_ candidates: [SettingEntry], to peer: ReplicaID) {
        var batch: [SettingEntry] = []
        var bytes = 0
        var through = sentThrough
        let policy = settings.policy
        for entry in candidates {
            bytes += Self.estimatedBytes(of: entry)
            if bytes > Self.batchBytes, !batch.isEmpty { break }
            through = entry.sequence
            if needs(entry, peer: peer), policy.isEmpty || !policy.isLocal(entry.key) { batch.append(entry) }
        }
        guard !batch.isEmpty else {
            // The peer has all of these (or gets them from their writer): nothing to send or await.
            skip(through: through, for: peer)
            return
        }
        sentThrough = through
        note(peer) { $0.sentThrough = through }
        let local = settings.sequence
        // Announce how far this side's log goes that the peer may still expect: no further than
        // this batch when it reaches the end (what comes later may be skipped).
        send(.replicate(entries: batch, through: through, sequence: through >= local ? through : local))
        inFlight.append((through, true))
    }

    /// What `entry` adds to a frame, about: its key, its stored value and the fields around them.
    static func estimatedBytes(of entry: SettingEntry) -> Int {
        entry.key.utf8.count + (entry.value?.storageSize ?? 0) + 64
    }

    /// Records a window through `through` that needs nothing sent or awaited.
    private func skip(through: Int64, for peer: ReplicaID) {
        sentThrough = through
        note(peer) { $0.sentThrough = through }
        inFlight.append((through, false))
        settleAcknowledged(peer)
    }

    /// Whether the peer lacks `entry` and cannot get it from a better place.
    private func needs(_ entry: SettingEntry, peer: ReplicaID) -> Bool {
        let author = entry.version.replica
        // The peer wrote it, or is connected to the replica that did, which sends it directly
        // (anti-entropy repairs the rare entry lost when that connection breaks first).
        if author == peer || neighbours.contains(author) { return false }
        // A value stored before the depth limit existed could not be parsed by the peer and
        // would wedge the link: it stays local, and the rest flows on.
        if let value = entry.value, value.nestingDepth > SettingValue.maximumNestingDepth { return false }
        return true
    }

    /// Tells the peer which replicas this one is connected to, when that changed.
    func announceNeighbours() {
        guard isStarted, let peer else { return }
        let current = registry.connected.filter { $0 != peer }
        guard current != announcedNeighbours else { return }
        announcedNeighbours = current
        send(.neighbours(current))
    }
}
