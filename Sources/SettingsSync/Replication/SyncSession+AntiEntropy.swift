import SettingsStore
import SettingsWire

/// Anti-entropy: once nothing is in flight between two replicas, the one with the lower id
/// compares digests; if they differ it compares the 4096 bucket sums, then the two exchange the
/// entries of the differing buckets, each keeping the winners. A million keys with one
/// difference cost a digest, 64 KiB of sums and one bucket of entries. Entries this side
/// refused count as held (`RefusedEntries`): replicas that differ only by them agree.
///
/// Repairs carry every entry of the differing buckets, but a side counts (and logs) only the
/// keys it really lacked: its own entries, or entries the sender's stream had already brought it
/// (at or below its cursor from the sender) from a writer it does not hear from directly. An
/// entry still on its way (written after the look, or coming from a writer this side is
/// connected to) is applied and not counted; whatever still differs leads to another
/// comparison a moment later.
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
        guard isSending, isInitiator, check == .idle, !isHeldBack, !isRefusingBatches, hasNothingInFlight
        else { return }
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
        let now = settings.sequenceAndDigest
        if digest == refused.digest(adjusting: now.digest, in: settings) {
            markAgreed(peer, at: now)
            send(.agreed(settled: settled))
            return
        }
        note(peer) { $0.agreement = .checking }
        send(.buckets(refused.bucketSums(of: settings)))
    }

    /// The stored bytes a repair frame carries at most, about: a quarter of the frame limit,
    /// for JSON's escapes. A larger loss is repaired over several comparisons.
    static let repairBytes = SyncSession.maximumFrameBytes / 4

    /// This side's entries of `buckets`, for a repair: all of them but a value nested deeper
    /// than the peer can parse, which stays here as replication leaves it.
    private func repairable(inBuckets buckets: [Int]) -> [SettingEntry] {
        settings.entries(inBuckets: Set(buckets)).filter { entry in
            entry.value.map { $0.nestingDepth <= SettingValue.maximumNestingDepth } ?? true
        }
    }

    /// `entries`, whole buckets at a time in bucket order, as far as `repairBytes` allows (the
    /// first bucket always): what is left still differs, and the next comparison takes it.
    private func withinRepairBudget(_ entries: [SettingEntry]) -> [SettingEntry] {
        let byBucket = Dictionary(grouping: entries) { ReplicaCache.bucket(of: $0.key) }
        var kept: [SettingEntry] = []
        var bytes = 0
        for bucket in byBucket.keys.sorted() {
            let group = byBucket[bucket] ?? []
            let size = group.reduce(0) { $0 + Self.estimatedBytes(of: $1) }
            if !kept.isEmpty, bytes + size > Self.repairBytes { break }
            kept += group
            bytes += size
        }
        return kept
    }

    /// Applies a repair's entries from `peer`; returns how many keys this replica really lacked
    /// (see the type's comment): what the comparison counts and logs.
    private func applyRepair(_ entries: [SettingEntry], from peer: ReplicaID) throws(SettingsError) -> Int {
        // Whether the key holds this very entry (a damaged row keeps its version, not its value).
        func holds(_ entry: SettingEntry) -> Bool {
            settings.entry(forKey: entry.key).map { $0.version == entry.version && $0.value == entry.value }
                ?? false
        }
        // Read before applying: other connections apply meanwhile, and what they bring was not
        // lacking.
        let heldBefore = entries.map(holds)
        let received = settings.receivedSequence(from: peer) ?? 0
        let outcome = try settings.applyRemote(entries, from: peer, through: nil, reason: .replica)
        noteRefusals(outcome, of: entries, from: peer)
        guard outcome.applied > 0 else { return 0 }
        let direct = Set(registry.connected)
        var lacked = Set<String>()
        for (entry, wasHeld) in zip(entries, heldBefore) where !wasHeld && holds(entry) {
            let author = entry.version.replica
            let wasDue =
                author == localID
                || (entry.sequence <= received && (author == peer || !direct.contains(author)))
            if wasDue { lacked.insert(entry.key) }
        }
        return lacked.count
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
        let held = repairable(inBuckets: differing)
        let entries = withinRepairBudget(held)
        // All the differing buckets when this side's entries fit (the answerer limits its own
        // winners), else those up to the last one the entries reach.
        let last = entries.map { ReplicaCache.bucket(of: $0.key) }.max() ?? differing[0]
        let buckets = entries.count == held.count ? differing : differing.filter { $0 <= last }
        send(.repair(buckets: buckets, entries: entries, final: false, applied: 0))
    }

    /// Applies the other side's entries of the differing buckets; the answering side then sends
    /// back its own winners among them.
    func repair(
        buckets: [Int], entries: [SettingEntry], final: Bool, applied peerApplied: Int, from peer: ReplicaID
    )
        throws(SettingsError)
    {
        guard !isRefusingBatches else { return }
        let lacked: Int
        do throws(SettingsError) {
            lacked = try applyRepair(entries, from: peer)
        } catch  where error.isStorageFailure {
            if final { check = .idle }
            refuse(error, from: peer, sequence: 0)
            return
        }
        if final {
            // The answerer gives no verdict after a repair: only a comparison that finds the
            // digests equal lets both sides agree.
            conclude(differing: lacked + peerApplied, answererAgreed: false, with: peer)
            return
        }
        var theirs: [String: SettingEntry] = [:]
        for entry in entries {
            if let other = theirs[entry.key], other.wins(over: entry) { continue }
            theirs[entry.key] = entry
        }
        let winners = withinRepairBudget(
            repairable(inBuckets: buckets).filter { ours in
                theirs[ours.key].map { ours.wins(over: $0) } ?? true
            })
        // `applied` tells the checker how many keys this side lacked; its winners the checker
        // counts as it applies them.
        send(.repair(buckets: buckets, entries: winners, final: true, applied: lacked))
        // Stay `checking` unless something was lost: the next comparison says agreed.
        if lacked > 0 { record(differing: lacked, with: peer) }
    }

    /// The starting side's verdict: agreed, or how many keys differed (and were repaired; the
    /// changes that repair made lead to another comparison).
    ///
    /// Agreement stands only when the answerer reached it too (`answererAgreed`) and this side's
    /// digest is still the one it compared: an entry from a third replica that crossed the
    /// comparison moves one side's digest with no change on the other that would start the next
    /// one, and that side would show `checking`, `diverged` or `unknown` for good.
    ///
    /// The verdict names one state, read once: a local commit landing between reading the digest
    /// and recording the verdict would otherwise be taken as agreed, and no comparison would
    /// follow it.
    func conclude(differing: Int, answererAgreed: Bool, with peer: ReplicaID) {
        let compared: UInt64? = if case .comparing(let digest) = check { digest } else { nil }
        check = .idle
        if differing == 0 {
            let now = settings.sequenceAndDigest
            guard answererAgreed, compared == refused.digest(adjusting: now.digest, in: settings) else {
                retryCheckLater()
                return
            }
            markAgreed(peer, at: now)
            return
        }
        record(differing: differing, with: peer)
        // A repair changed the store, which schedules the next comparison once it settles.
        scheduleCheck()
    }

    /// Records that `differing` (at least one) keys differed and were repaired.
    private func record(differing: Int, with peer: ReplicaID) {
        check = .idle
        note(peer) {
            $0.agreement = .diverged(keys: differing)
            // Saturating: the count includes what the peer says it lacked (up to 2^62 a frame).
            let (sum, overflowed) = $0.repairedKeys.addingReportingOverflow(differing)
            $0.repairedKeys = overflowed ? .max : sum
        }
        logger?.log(
            .warning,
            "replica \(peer) at \(address) differed in \(differing) key(s) with nothing in flight; repaired by exchanging the newest versions"
        )
    }

    /// Records agreement with `peer` on the state `now` (sequence number and digest, read
    /// together) that the comparison found equal.
    private func markAgreed(_ peer: ReplicaID, at now: (sequence: Int64, digest: UInt64)) {
        check = .agreed(atSequence: now.sequence, digest: now.digest)
        let refusedKeys = refused.count
        note(peer) {
            $0.agreement = .agreed
            $0.refusedKeys = refusedKeys
        }
    }
}
