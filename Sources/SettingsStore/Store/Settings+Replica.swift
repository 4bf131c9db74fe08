extension Settings {
    /// The replicas this one syncs or has synced with during this run, with their progress.
    public var peers: [PeerStatus] {
        peerRegistry.all
    }

    /// The current entries (tombstones included) with a local sequence number above `sequence`,
    /// in sequence order, at most `limit`: what a peer that has seen `sequence` still lacks.
    package func entries(after sequence: Int64, limit: Int = .max) -> [SettingEntry] {
        cache.withLock { $0.entries(after: sequence, limit: limit) }
    }

    /// An order-independent fingerprint of every entry and its version; replicas that have
    /// converged have equal digests.
    public var digest: String {
        cache.withLock { $0.digest }
    }

    /// The last of `peer`'s sequence numbers applied here, or nil if it never synced with this replica.
    public func receivedSequence(from peer: ReplicaID) -> Int64? {
        writer.withLock { $0.peerCursors[peer] }
    }
}
