/// The version of one stored entry: when it was written and by which replica.
///
/// Versions are totally ordered, timestamp first, then replica id; for each key the highest
/// version wins on every replica, whatever order changes arrive in.
public struct SettingVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The hybrid logical clock reading of the write.
    public let timestamp: HybridTimestamp
    /// The replica that made the write.
    public let replica: ReplicaID

    /// Creates a version.
    package init(timestamp: HybridTimestamp, replica: ReplicaID) {
        self.timestamp = timestamp
        self.replica = replica
    }

    /// Timestamp order, ties broken by replica id.
    public static func < (lhs: SettingVersion, rhs: SettingVersion) -> Bool {
        (lhs.timestamp, lhs.replica) < (rhs.timestamp, rhs.replica)
    }

    /// `timestamp@replica`.
    public var description: String { "\(timestamp)@\(replica)" }
}
