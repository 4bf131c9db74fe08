/// Anti-entropy: once nothing is in flight between two replicas, the one with the lower id
/// compares digests; if they differ it compares the 4096 bucket sums, then the two exchange the
/// entries of the differing buckets, each keeping the winners. A million keys with one
/// difference cost a digest, 64 KiB of sums and one bucket of entries. Entries this side
/// refused count as held (`RefusedEntries`): replicas that differ only by them agree.
///
/// A repair carries only what the comparison proves missing: entries as of the sender's look
/// (later ones are on their way through replication), and not those the peer receives from a
/// third replica that wrote them (they may simply not have arrived). So every key a repair
/// changes was really lost, and only those are counted and logged; whatever still differs (in
/// flight) leads to another comparison a moment later.
extension SyncSession {
    /// How long changes must settle before a comparison starts.
    static let checkDelay = 0.05
    /// How long to wait after `busy` before asking again.
    static let busyDelay = 0.25

    /// The replica with the lower id starts comparisons, so that a pair compares once.
    private var isInitiator: Bool {
        peer.map { localID < $0 } ?? false
    }

    /// Whether the peer has acknowledged (or needs nothing of) every local change.
    private var hasNothingInFlight: Bool {
        guard let peer else { return false }
        let acknowledged = registry.status(of: peer)?.acknowledgedThrough ?? 0
        return acknowledged >= settings.sequence
    }

    /// A local change makes the last verdict stale, unless the digest did not move (a key of
    /// scope `local`, which no comparison covers: the peer would never hear of it and compare).
    func noteChange() {
        let now = settings.sequenceAndDigest
        guard let peer, case .agreed(let sequence, let digest) = check, sequence != now.sequence else {
            return
        }
        guard now.digest != digest else {
            check = .agreed(atSequence: now.sequence, digest: now.digest)
            return
        }
        check = .idle
        note(peer) { status in
            if status.agreement != .checking { status.agreement = .unknown }
        }
    }

    /// Starts a comparison soon, if this side starts them and everything it sent is settled.
    func scheduleCheck() {
        guard isSending, isInitiator, check == .idle, hasNothingInFlight else { return }
        check = .scheduled
        after(Self.checkDelay) { [weak self] in self?.startCheck() }
    }

    private func startCheck() {
        guard check == .scheduled else { return }
        check = .idle
        // Changes that arrived meanwhile schedule another check once they settle.
        guard !isClosed, hasNothingInFlight, let peer else { return }
        note(peer) { $0.agreement = .checking }
        refused.prune(in: settings)
        let digest = refused.digest(of: settings)
        check = .comparing(digest: digest, sequence: settings.sequence)
        send(.check(digest: digest, settled: settled))
    }

    /// The answering side of `check`.
    func answerCheck(digest: UInt64) {
        guard let peer else { return }
        guard hasNothingInFlight else {
            send(.busy)
            return
        }
        refused.prune(in: settings)
        if digest == refused.digest(of: settings) {
            markAgreed(peer)
            send(.agreed(settled: settled))
            return
        }
        note(peer) { $0.agreement = .checking }
        answeredSequence = settings.sequence
        send(.buckets(refused.bucketSums(of: settings)))
    }

    /// This side's entries of `buckets` that a repair may carry to `peer`: as of `sequence`, and
    /// not those a third replica wrote that the peer is connected to (they may be on their way
    /// from it; a comparison with it repairs them if they were lost). The peer's own entries
    /// are carried: it may have lost them, or collected their deletion.
    private func repairable(inBuckets buckets: [Int], asOf sequence: Int64, for peer: ReplicaID)
        -> [SettingEntry]
    {
        settings.entries(inBuckets: Set(buckets)).filter { entry in
            let author = entry.version.replica
            guard entry.sequence <= sequence, author == peer || !neighbours.contains(author) else {
                return false
            }
            // As replication does: a value nested deeper than the peer can parse stays here.
            return entry.value.map { $0.nestingDepth <= SettingValue.maximumNestingDepth } ?? true
        }
    }

    /// The peer answered `busy`: try again once its changes settle.
    func retryCheckLater() {
        check = .idle
        after(Self.busyDelay) { [weak self] in self?.scheduleCheck() }
    }

    /// The starting side, with the answerer's bucket sums: sends its entries of the buckets
    /// that differ.
    func compareBuckets(_ sums: [UInt64]) {
        guard let peer else { return }
        let ours = refused.bucketSums(of: settings)
        guard sums.count == ours.count else {
            endSoon(
                SettingsError(
                    .protocolError,
                    "a 'buckets' frame with \(sums.count) sums; anti-entropy compares \(ours.count)"))
            return
        }
        let differing = ours.indices.filter { ours[$0] != sums[$0] }
        guard !differing.isEmpty else {
            // Equal sums: one side caught up since the check (from a third replica). The
            // answerer, still `checking`, hears a verdict only from a comparison: compare again.
            conclude(differing: 0, answererAgreed: false, with: peer)
            return
        }
        let look: Int64 = if case .comparing(_, let sequence) = check { sequence } else { settings.sequence }
        send(
            .repair(
                buckets: differing, entries: repairable(inBuckets: differing, asOf: look, for: peer),
                final: false, applied: 0))
    }

    /// Applies the other side's entries of the differing buckets; the answering side then sends
    /// back its own winners among them.
    func repair(
        buckets: [Int], entries: [SettingEntry], final: Bool, applied peerApplied: Int, from peer: ReplicaID
    )
        throws(SettingsError)
    {
        let outcome = try settings.applyRemote(entries, from: peer, through: nil, reason: .replica)
        noteRefusals(outcome, of: entries, from: peer)
        let applied = outcome.applied
        if final {
            // The answerer gives no verdict after a repair: only a comparison that finds the
            // digests equal lets both sides agree.
            conclude(differing: applied + peerApplied, answererAgreed: false, with: peer)
            return
        }
        var theirs: [String: SettingEntry] = [:]
        for entry in entries {
            if let other = theirs[entry.key], other.wins(over: entry) { continue }
            theirs[entry.key] = entry
        }
        let look = answeredSequence ?? settings.sequence
        let winners = repairable(inBuckets: buckets, asOf: look, for: peer).filter { ours in
            theirs[ours.key].map { ours.wins(over: $0) } ?? true
        }
        send(.repair(buckets: buckets, entries: winners, final: true, applied: applied))
        // Nothing was lost this way: stay `checking` until the next comparison says agreed.
        if applied + winners.count > 0 { record(differing: applied + winners.count, with: peer) }
    }

    /// The starting side's verdict: agreed, or how many keys differed (and were repaired; the
    /// changes that repair made lead to another comparison).
    ///
    /// Agreement stands only when the answerer reached it too (`answererAgreed`) and this side's
    /// digest is still the one it compared: an entry from a third replica that crossed the
    /// comparison moves one side's digest with no change on the other that would start the next
    /// one, and that side would show `checking`, `diverged` or `unknown` for good.
    func conclude(differing: Int, answererAgreed: Bool, with peer: ReplicaID) {
        let compared: UInt64? = if case .comparing(let digest, _) = check { digest } else { nil }
        check = .idle
        guard differing > 0 || (answererAgreed && compared == refused.digest(of: settings)) else {
            retryCheckLater()
            return
        }
        record(differing: differing, with: peer)
        // A repair changed the store, which schedules the next comparison once it settles.
        scheduleCheck()
    }

    private func record(differing: Int, with peer: ReplicaID) {
        guard differing > 0 else {
            markAgreed(peer)
            return
        }
        check = .idle
        note(peer) {
            $0.agreement = .diverged(keys: differing)
            $0.repairedKeys += differing
        }
        logger?.log(
            .warning,
            "replica \(peer) at \(address) differed in \(differing) key(s) with nothing in flight; repaired by exchanging the newest versions"
        )
    }

    private func markAgreed(_ peer: ReplicaID) {
        let now = settings.sequenceAndDigest
        check = .agreed(atSequence: now.sequence, digest: now.digest)
        let refusedKeys = refused.count
        note(peer) {
            $0.agreement = .agreed
            $0.refusedKeys = refusedKeys
        }
    }
}
