/// Which writes a replica lets in: the same limits for every source, applied to a whole local
/// transaction at once, and entry by entry to what a replica sends.
extension ReplicaCache {
    /// The writes that change something (removing an unset key, or writing the value a key
    /// already holds, does not); throws `limitExceeded` if applying them all would break one of
    /// `limits`, so a transaction is taken whole or not at all.
    func stage(_ writes: [PendingWrite], limits: SettingsLimits) throws(SettingsError)
        -> [StagedWrite]
    {
        var staged: [StagedWrite] = []
        staged.reserveCapacity(writes.count)
        var after = totals
        for write in writes {
            let (key, value) = (write.key, write.value)
            let current = entries[key]
            let old = current?.value
            // Writing what a key already holds changes nothing: no version, no event, no sync.
            if SettingValue.identical(old, value) { continue }
            if let value { try limits.check(value, forKey: key) }
            staged.append(
                StagedWrite(key: key, value: value, replaces: current?.version.timestamp, actor: write.actor))
            after = after.replacing(key: key, old: old, with: value)
        }
        let lastKey = writes.last { $0.value != nil }?.key ?? ""
        try limits.checkTotals(after, before: totals, key: lastKey)
        return staged
    }

    /// What `merge` makes of a replica's entries.
    struct Merge {
        /// The entries that win over the local state and fit the limits.
        var accepted: [SettingEntry] = []
        /// For each of `accepted`, the entry it replaces (found by the merge, so the history
        /// need not look again).
        var replaced: [SettingEntry?] = []
        /// The ones the limits refused, described by the key's unchanged local state.
        var refused: [SettingsChange.KeyChange] = []
        /// The ones their schema refused, described the same way.
        var schemaRefused: [SettingsChange.KeyChange] = []
        /// Accepted keys whose effective value a lock holds: stored, not announced.
        var locked: [String] = []
        /// Keys this replica does not hold whose incoming entry is older than the tombstone
        /// horizon: possibly deleted long ago, so not taken back.
        var expired: [String] = []
        /// Entries the arrival gate refused (an invalid key, a forged version, a value no path
        /// could carry back): not stored, not announced, not relayed.
        var rejected: [SettingsError] = []
    }

    /// Splits entries from a replica into those that win over the local state (the highest
    /// version per key) and fit the limits, the refused ones, and the expired ones (older than
    /// `horizon` for keys not held here). Removals always fit.
    func merge(_ incoming: [SettingEntry], limits: SettingsLimits, horizon: HybridTimestamp) -> Merge {
        var rejected: [SettingsError] = []
        var admitted: [SettingEntry] = []
        admitted.reserveCapacity(incoming.count)
        for received in incoming {
            do throws(SettingsError) {
                try Arrival.check(received, maximumKeyBytes: limits.maximumKeyBytes)
            } catch {
                rejected.append(error)
                continue
            }
            // Keys of scope `local` belong to each replica alone: never taken from another.
            if !policy.isEmpty, policy.isLocal(received.key) { continue }
            // A replica of another build may send a key in another normal form: it is the same key.
            let entry =
                KeyIdentity.isNormalized(received.key)
                ? received
                : SettingEntry(
                    key: KeyIdentity.normalize(received.key), value: received.value,
                    version: received.version, sequence: received.sequence)
            admitted.append(entry)
        }
        var result = Merge(rejected: rejected)
        var running = totals
        for (entry, stored) in winners(of: admitted) {
            let key = entry.key
            if stored == nil, entry.version.timestamp < horizon {
                result.expired.append(key)
                continue
            }
            let after = running.replacing(key: key, old: stored?.value, with: entry.value)
            if !policy.isEmpty {
                do throws(SettingsError) {
                    try policy.checkArrival(entry.value, forKey: key)
                } catch {
                    result.schemaRefused.append(
                        SettingsChange.KeyChange(
                            key: key, refused: entry.version, kept: stored.map { ($0.value, $0.version) }))
                    continue
                }
                if policy.lock(forKey: key) != nil { result.locked.append(key) }
            }
            do throws(SettingsError) {
                if let value = entry.value {
                    // The key's form passed `Arrival`; over this store's length it is a quota matter.
                    guard key.utf8.count <= limits.maximumKeyBytes else {
                        throw SettingsError.invalidKey(key, "longer than \(limits.maximumKeyBytes) bytes")
                    }
                    try limits.check(value, forKey: key)
                    try limits.checkTotals(after, before: running, key: key)
                }
                result.accepted.append(entry)
                result.replaced.append(stored)
                running = after
            } catch {
                result.refused.append(
                    SettingsChange.KeyChange(
                        key: key, refused: entry.version, kept: stored.map { ($0.value, $0.version) }))
            }
        }
        return result
    }

    /// The entries of `batch` that win over what this replica holds, at most one per key (the
    /// highest version, in the order keys first appear), each with the entry it replaces.
    ///
    /// A batch from a replica is up to a few thousand entries with each key once: a set of the keys'
    /// hashes proves it, and each key is then looked up in the index once. Only a batch with a
    /// hash seen twice pays for a table of its winners.
    private func winners(of batch: [SettingEntry]) -> [(SettingEntry, stored: SettingEntry?)] {
        let wins = { (entry: SettingEntry, current: SettingEntry) in entry.wins(over: current) }
        var found: [(SettingEntry, stored: SettingEntry?)] = []
        found.reserveCapacity(batch.count)
        guard KeyIdentity.hasRepeats(batch.lazy.map(\.key)) else {
            for entry in batch {
                let stored = entries[entry.key]
                if stored.map({ wins(entry, $0) }) ?? true { found.append((entry, stored)) }
            }
            return found
        }
        var winners: [String: SettingEntry] = [:]
        var order: [String] = []
        for entry in batch {
            guard (winners[entry.key] ?? entries[entry.key]).map({ wins(entry, $0) }) ?? true else {
                continue
            }
            if winners.updateValue(entry, forKey: entry.key) == nil { order.append(entry.key) }
        }
        for key in order {
            if let entry = winners[key] { found.append((entry, entries[key])) }
        }
        return found
    }
}
