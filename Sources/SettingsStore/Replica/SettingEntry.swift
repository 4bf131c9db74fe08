/// One key's stored state on a replica: its value, or a tombstone, with version and sequence.
public struct SettingEntry: Sendable, Equatable {
    /// The key.
    public let key: String
    /// The value, or `nil` when the key was deleted (a tombstone).
    public let value: SettingValue?
    /// Who wrote this state, and when.
    public let version: SettingVersion
    /// The local sequence number at which this replica applied the state; grows with every change.
    public let sequence: Int64

    /// Creates an entry.
    public init(key: String, value: SettingValue?, version: SettingVersion, sequence: Int64) {
        self.key = key
        self.value = value
        self.version = version
        self.sequence = sequence
    }

    /// Whether this entry records a deletion.
    public var isTombstone: Bool { value == nil }

    /// Whether this state replaces `other` on every replica: a higher version wins; equal
    /// versions with different contents (a damaged file, a copied replica) are settled by the
    /// contents' fingerprint, so replicas still agree.
    func wins(over other: SettingEntry) -> Bool {
        if version != other.version { return version > other.version }
        return Fingerprint.of(self) > Fingerprint.of(other)
    }
}
