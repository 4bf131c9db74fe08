#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

extension Settings {
    /// The current entries (tombstones included) with a local sequence number above `sequence`,
    /// in sequence order, at most `limit`: what a peer that has seen `sequence` still lacks.
    package func entries(after sequence: Int64, limit: Int = .max) -> [SettingEntry] {
        cache.withLock { $0.entries(after: sequence, limit: limit) }
    }

    /// Records that `peer` has nothing this replica needs through its sequence number
    /// `through`, in memory (the next batch from it persists the cursor).
    package func noteSettled(from peer: ReplicaID, through: Int64, incarnation: UUID?) {
        writer.withLock { writer in
            var record = writer.peers[peer] ?? PeerRecord(receivedSequence: 0, incarnation: incarnation)
            guard record.receivedSequence < through else { return }
            record.receivedSequence = through
            // The position is in the peer's running incarnation: record them together, or a later
            // lineage check would read it against an older one and see a fork.
            record.incarnation = incarnation ?? record.incarnation
            writer.peers[peer] = record
        }
    }

    /// Calls `handler` after every commit, announced or not, and after a change of policy or
    /// identity: how replication learns what to send, outside the store's locks.
    package func observeCommits(_ handler: @escaping @Sendable (CommitNotice) -> Void) -> SubscriptionToken {
        observers.addCommitListener(handler)
    }

    /// The digest as a number, for anti-entropy.
    package var digestValue: UInt64 {
        cache.withLock { $0.fingerprintSum }
    }

    /// The sequence number and the digest of one state: read under the writer lock, which every
    /// commit holds while it updates both.
    package var sequenceAndDigest: (sequence: Int64, digest: UInt64) {
        writer.withLock { writer in (writer.lastSequence, cache.withLock { $0.fingerprintSum }) }
    }

    /// Whether `key` is compared with other replicas: every key but those of scope `local`.
    package func isShared(_ key: String) -> Bool {
        cache.withLock { $0.isShared(key) }
    }

    /// The digest of each bucket of keys, for anti-entropy.
    package var bucketSums: [UInt64] {
        cache.withLock { $0.bucketSums }
    }

    /// The entries (tombstones included) whose keys fall in `buckets`.
    package func entries(inBuckets buckets: Set<Int>) -> [SettingEntry] {
        cache.withLock { $0.entries(inBuckets: buckets) }
    }

    /// An order-independent fingerprint of every entry and its version; replicas that have
    /// converged have equal digests.
    package var digest: String {
        cache.withLock { $0.digest }
    }

    /// Moves `peer`'s cursor back to `sequence`, durably: a hub found to hand out numbers again
    /// (restored, failed over, its counter reset) is pulled from there, after restarts too.
    package func rewindCursor(of peer: ReplicaID, to sequence: Int64) throws(SettingsError) {
        try writer.withLock { (writer) throws(SettingsError) in
            guard let record = writer.peers[peer], record.receivedSequence > sequence else { return }
            let cursor = PeerCursor(
                peer: peer, record: PeerRecord(receivedSequence: sequence, incarnation: record.incarnation),
                contactMilliseconds: configuration.clock())
            _ = try writer.persist([], cursor: cursor, path: displayPath)
        }
    }

    /// The last of `peer`'s sequence numbers applied here, or nil if it never synced with this replica.
    package func receivedSequence(from peer: ReplicaID) -> Int64? {
        writer.withLock { $0.peers[peer]?.receivedSequence }
    }
}
