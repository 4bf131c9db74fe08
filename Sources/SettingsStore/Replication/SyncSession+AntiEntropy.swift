/// Anti-entropy: once nothing is in flight between two replicas, the one with the lower id
/// compares digests; if they differ it compares the 4096 bucket sums, then the two exchange the
/// entries of the differing buckets, each keeping the winners. A million keys with one
/// difference cost a digest, 64 KiB of sums and one bucket of entries. Entries this side
/// refused count as held (`RefusedEntries`): replicas that differ only by them agree.
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
        check = .comparing(digest: digest)
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
        send(.buckets(refused.bucketSums(of: settings)))
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
        send(
            .repair(
                buckets: differing, entries: settings.entries(inBuckets: Set(differing)), final: false,
                applied: 0))
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
            // The answerer counted its winners as repaired; when this side had them already
            // (from a third replica, since the check), only another comparison settles both.
            conclude(
                differing: applied + peerApplied, answererAgreed: entries.isEmpty && peerApplied == 0,
                with: peer)
            return
        }
        var theirs: [String: SettingEntry] = [:]
        for entry in entries {
            if let other = theirs[entry.key], other.wins(over: entry) { continue }
            theirs[entry.key] = entry
        }
        let winners = settings.entries(inBuckets: Set(buckets)).filter { ours in
            theirs[ours.key].map { ours.wins(over: $0) } ?? true
        }
        send(.repair(buckets: buckets, entries: winners, final: true, applied: applied))
        record(differing: applied + winners.count, with: peer)
    }

    /// The starting side's verdict: agreed, or how many keys differed (and were repaired; the
    /// changes that repair made lead to another comparison).
    ///
    /// Agreement stands only when the answerer reached it too (`answererAgreed`) and this side's
    /// digest is still the one it compared: an entry from a third replica that crossed the
    /// comparison moves one side's digest with no change on the other that would start the next
    /// one, and that side would show `checking`, `diverged` or `unknown` for good.
    func conclude(differing: Int, answererAgreed: Bool, with peer: ReplicaID) {
        let compared: UInt64? = if case .comparing(let digest) = check { digest } else { nil }
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
