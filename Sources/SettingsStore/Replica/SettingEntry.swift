/// One key's stored state on a replica: its value, or a tombstone, with version and sequence.
package struct SettingEntry: Sendable, Equatable {
    /// The key.
    package let key: String
    /// The value, or `nil` when the key was deleted (a tombstone).
    package let value: SettingValue?
    /// Who wrote this state, and when.
    package let version: SettingVersion
    /// The local sequence number at which this replica applied the state; grows with every change.
    package let sequence: Int64

    /// Creates an entry.
    package init(key: String, value: SettingValue?, version: SettingVersion, sequence: Int64) {
        self.key = key
        self.value = value
        self.version = version
        self.sequence = sequence
    }

    /// Whether this entry records a deletion.
    package var isTombstone: Bool { value == nil }

    /// Whether this state replaces `other` on every replica: a higher version wins; equal
    /// versions with different contents (a damaged file, a copied replica) are settled by the
    /// contents' fingerprint, so replicas still agree.
    package func wins(over other: SettingEntry) -> Bool {
        if version != other.version { return version > other.version }
        return Fingerprint.of(self) > Fingerprint.of(other)
    }
}
