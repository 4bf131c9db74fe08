import SettingsStore
import SettingsWire

/// Anti-entropy with a hub namespace: this replica's side of the comparison. It keeps each
/// key's hub fingerprint (`HubFingerprint`), updated from the entries committed since it last
/// looked, so a check re-hashes only what changed; PostgreSQL computes the other side.
///
/// Used only on the hub link's thread.
struct HubAntiEntropy {
    private var fingerprints: [String: UInt64] = [:]
    private var seenSequence: Int64 = 0
    /// The fingerprints of hub rows this replica does not take (unreadable, out of range, over
    /// its limits, against its schema): left out of the hub's side of every comparison, so a
    /// forged row makes the namespace `agreed (n hub entries refused)`, not diverged for ever.
    private(set) var refused: Set<UInt64> = []
    /// Seals entries before they are fingerprinted, when the namespace is sealed: the hub sees
    /// only sealed rows.
    var sealer: EntrySealer?

    /// Notes hub rows this replica does not take.
    mutating func refuse(_ rows: some Sequence<UInt64>) {
        refused.formUnion(rows)
    }

    /// Forgets refused rows of `buckets` that the hub no longer holds (`present`: those it does).
    mutating func forgetRefused(inBuckets buckets: Set<Int>, present: Set<UInt64>) {
        refused = refused.filter { !buckets.contains(HubFingerprint.bucket(of: $0)) || present.contains($0) }
    }

    /// The hub's digest without the refused rows.
    func hubDigest(_ sum: UInt64) -> UInt64 {
        refused.reduce(sum) { $0 &- $1 }
    }

    /// The hub's bucket sums without the refused rows (every bucket a refused row names kept,
    /// with `keepingEmpty`, so one whose refused row left the hub is looked at).
    func hubBucketSums(_ sums: [Int: UInt64], keepingEmpty: Bool = false) -> [Int: UInt64] {
        var adjusted = sums
        for fingerprint in refused {
            adjusted[HubFingerprint.bucket(of: fingerprint), default: 0] &-= fingerprint
        }
        return keepingEmpty ? adjusted : adjusted.filter { $0.value != 0 }
    }

    /// Takes in every entry committed since the last call.
    mutating func refresh(from settings: Settings) {
        let changed = settings.entries(after: seenSequence)
        if fingerprints.isEmpty { fingerprints.reserveCapacity(changed.count) }
        for entry in changed {
            // What a push leaves out (`HubConnector.pushAll`) is not compared either.
            if (entry.value?.nestingDepth ?? 0) > SettingValue.maximumNestingDepth {
                fingerprints[entry.key] = nil
            } else {
                fingerprints[entry.key] = HubFingerprint.of(entry, sealedBy: sealer)
            }
        }
        if let last = changed.last { seenSequence = last.sequence }
    }

    /// Starts over (a new replica id, a new namespace): every entry is hashed again.
    mutating func reset() {
        fingerprints = [:]
        seenSequence = 0
        refused = []
    }

    /// The fingerprint this replica holds for `key`, when it holds an entry of it that syncs.
    func fingerprint(of key: String, policy: SettingsPolicy) -> UInt64? {
        guard policy.isEmpty || !policy.isLocal(key) else { return nil }
        return fingerprints[key]
    }

    /// The sum of the fingerprints of every entry that syncs through the hub.
    func digest(policy: SettingsPolicy) -> UInt64 {
        var sum: UInt64 = 0
        for (key, fingerprint) in fingerprints where policy.isEmpty || !policy.isLocal(key) {
            sum &+= fingerprint
        }
        return sum
    }

    /// The sums of the non-empty buckets, as the hub computes its own.
    func bucketSums(policy: SettingsPolicy) -> [Int: UInt64] {
        var sums: [Int: UInt64] = [:]
        for (key, fingerprint) in fingerprints where policy.isEmpty || !policy.isLocal(key) {
            sums[HubFingerprint.bucket(of: fingerprint), default: 0] &+= fingerprint
        }
        return sums
    }

    /// The keys that sync whose fingerprints fall in `buckets`.
    func keys(inBuckets buckets: Set<Int>, policy: SettingsPolicy) -> [String] {
        fingerprints.compactMap { key, fingerprint in
            buckets.contains(HubFingerprint.bucket(of: fingerprint))
                && (policy.isEmpty || !policy.isLocal(key))
                ? key : nil
        }
    }
}
