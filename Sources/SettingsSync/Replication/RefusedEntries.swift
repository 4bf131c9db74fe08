import SettingsStore
import SettingsWire

/// Entries a peer sent that this replica refused (its schemas, its limits, the arrival gate) and
/// does not hold: anti-entropy counts each in place of what this replica holds under its key, so
/// two replicas that differ only by them agree, with the count shown (`agreed (2 keys refused)`),
/// instead of comparing, repairing nothing and calling that agreement.
///
/// A key of scope `local` here that the peer shares (it has no schema saying otherwise) is
/// refused for good: this replica never takes it, and its own entry under the key is in no
/// digest of its own.
///
/// One per session: what a peer holds is the peer's. An entry of a shared key leaves once this
/// replica holds its key at that version or a later one (a local write, a newer entry from
/// anywhere).
struct RefusedEntries {
    private var byKey: [String: SettingEntry] = [:]

    /// How many keys are refused now.
    var count: Int { byKey.count }

    /// Records the entries of `batch` that `settings` did not take: it holds neither that
    /// version nor a later one under the key, or the key is of scope `local` here.
    ///
    /// - Returns: Whether any entry was recorded, and the keys of scope `local` here that were
    ///   not refused before.
    @discardableResult
    mutating func record(_ batch: [SettingEntry], in settings: Settings) -> (changed: Bool, local: [String]) {
        var local: [String] = []
        var changed = false
        for entry in batch {
            let key = KeyIdentity.normalize(entry.key)
            let isShared = settings.isShared(key)
            if isShared, let held = settings.entry(forKey: key), held.version >= entry.version { continue }
            if let known = byKey[key], known.version >= entry.version { continue }
            if !isShared, byKey[key] == nil { local.append(key) }
            byKey[key] = entry
            changed = true
        }
        return (changed, local)
    }

    /// Forgets the entries whose key `settings` now holds at their version or a later one.
    mutating func prune(in settings: Settings) {
        byKey = byKey.filter { key, entry in
            !settings.isShared(key)
                || (settings.entry(forKey: key).map { $0.version < entry.version } ?? true)
        }
    }

    /// The store's digest with each refused entry's fingerprint in place of the held entry's.
    func digest(of settings: Settings) -> UInt64 {
        digest(adjusting: settings.digestValue, in: settings)
    }

    /// `digest`, a digest of `settings` read earlier (with its sequence number, for a verdict
    /// that must name the state it compared), adjusted as `digest(of:)` adjusts the current one.
    func digest(adjusting digest: UInt64, in settings: Settings) -> UInt64 {
        byKey.reduce(digest) { sum, refused in
            sum &+ adjustment(refused.key, refused.value, in: settings)
        }
    }

    /// The store's bucket sums, adjusted as `digest(of:)` adjusts the digest.
    func bucketSums(of settings: Settings) -> [UInt64] {
        var sums = settings.bucketSums
        for (key, entry) in byKey {
            let bucket = ReplicaCache.bucket(of: key)
            guard sums.indices.contains(bucket) else { continue }
            sums[bucket] &+= adjustment(key, entry, in: settings)
        }
        return sums
    }

    /// What counting `entry` in place of the store's entry under `key` adds to a sum.
    private func adjustment(_ key: String, _ entry: SettingEntry, in settings: Settings) -> UInt64 {
        let held = settings.isShared(key) ? settings.entry(forKey: key).map(Fingerprint.of) : nil
        return Fingerprint.of(entry) &- (held ?? 0)
    }
}
