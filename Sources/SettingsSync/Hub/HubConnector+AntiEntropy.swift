import SettingsStore
import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HubConnector {
    /// Where one comparison with the hub ended.
    enum CheckOutcome {
        /// The digests were equal, leaving out this many hub rows this replica refuses.
        case agreed(refused: Int)
        /// They differed; this many keys were repaired, both ways.
        case diverged(repaired: Int)
        /// Rows numbered after the cursor differ: a pull brings them, then compare again.
        case busy
    }

    /// Compares this replica's digest with the namespace's, and when they differ, finds the
    /// buckets that differ and repairs them both ways: hub rows this replica lacks (or holds
    /// otherwise) are applied here, local entries the hub lacks (or holds otherwise) are pushed.
    /// Catches what numbering cannot: rows deleted or edited by hand, a hub restored from a
    /// dump or failed over, a reset counter, another copy of this replica's file.
    func compare(
        with hub: HubNamespace, entropy: inout HubAntiEntropy, as replica: ReplicaID, incarnation: UUID,
        pushed: Int64, cursor: Int64
    ) throws(SettingsError) -> CheckOutcome {
        entropy.refresh(from: settings)
        let policy = settings.policy
        let remote = try hub.digest()
        guard entropy.digest(policy: policy) != entropy.hubDigest(remote.sum) else {
            return .agreed(refused: entropy.refused.count)
        }
        let local = entropy.bucketSums(policy: policy)
        let hubSums = try hub.bucketSums()
        // Raw sums decide which buckets to fetch (a refused row that left the hub changes one).
        let adjusted = entropy.hubBucketSums(hubSums, keepingEmpty: true)
        let differing = Set(local.keys).union(hubSums.keys).union(adjusted.keys).filter {
            local[$0] ?? 0 != adjusted[$0] ?? 0 || hubSums[$0] ?? 0 != adjusted[$0] ?? 0
        }
        let rows = try hub.entries(inBuckets: differing.sorted(), limits: settings.configuration.limits)
        entropy.forgetRefused(
            inBuckets: differing, present: Set(rows.entries.map(\.fingerprint) + rows.unreadable))
        // Sealed rows refused here are counted once, not at every comparison that meets them.
        noteRefused(hub.takeRefusals(), in: hub)
        entropy.refuse(rows.unreadable)
        // Down: what the hub holds otherwise. The store keeps, per key, the higher version.
        // Rows numbered past the cursor were pushed meanwhile: the pull brings them.
        let differ = rows.entries.filter {
            !entropy.refused.contains($0.fingerprint)
                && entropy.fingerprint(of: $0.entry.key, policy: policy) != $0.fingerprint
        }
        let incoming = differ.filter { $0.entry.sequence <= cursor }
        let inFlight = incoming.count < differ.count
        var applied = 0
        if !incoming.isEmpty {
            let outcome = try settings.applyRemote(
                incoming.map(\.entry), from: hub.peerID, through: nil, reason: .replica)
            if let sequences = outcome.sequences { noteFromHub(sequences) }
            noteAhead(outcome.aheadOfClock)
            applied = outcome.applied
            entropy.refuse(refusedRows(incoming))
        }
        entropy.refresh(from: settings)
        // Up: local entries the hub lacks or holds otherwise (after the merge, this replica holds
        // the winner of every key it took from the hub).
        let held = Dictionary(
            rows.entries.map { ($0.entry.key, $0.fingerprint) }, uniquingKeysWith: { a, _ in a })
        let outgoing = entropy.keys(inBuckets: differing, policy: policy)
            .filter { held[$0] != entropy.fingerprint(of: $0, policy: policy) }
            .sorted().compactMap { settings.entry(forKey: $0) }
        var start = 0
        while start < outgoing.count {
            let batch = Array(outgoing[start..<min(outgoing.count, start + HubNamespace.batchEntries)])
            try hub.push(batch, from: replica, through: pushed, incarnation: incarnation)
            start += batch.count
        }
        // Listeners pull the repair now, not at their next safety-net look.
        if !outgoing.isEmpty { try? hub.notifyListeners() }
        if inFlight, applied + outgoing.count == 0 { return .busy }
        guard applied + outgoing.count > 0 else {
            // Nothing to repair: what differs is only what this replica refuses.
            return .agreed(refused: entropy.refused.count)
        }
        logger?.log(
            .warning,
            "this replica and the hub's namespace \(hub.name) differed (\(differing.count) of 4096 buckets): applied \(applied) hub entr\(applied == 1 ? "y" : "ies"), pushed \(outgoing.count); \(entropy.refused.count) hub row(s) refused here"
        )
        return .diverged(repaired: applied + outgoing.count)
    }

    /// The fingerprints of those of `rows` this replica did not take: it holds no entry of the
    /// key, or an older one (the arrival gate, the limits or a schema refused the row).
    func refusedRows(_ rows: [(entry: SettingEntry, fingerprint: UInt64)]) -> [UInt64] {
        rows.compactMap { row in
            guard let held = settings.entry(forKey: row.entry.key) else { return row.fingerprint }
            return held.version < row.entry.version ? row.fingerprint : nil
        }
    }
}
