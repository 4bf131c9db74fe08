/// The in-memory image of a replica that every read is served from: all entries (tombstones
/// included), the registered defaults, and running totals for the limits.
package struct ReplicaCache {
    private(set) var entries = EntryTable()
    var defaults: [String: SettingValue] = [:]
    /// Schemas, system defaults and locks: they shape reads, writes and arrivals.
    var policy = SettingsPolicy()
    /// The keys that hold a value (not tombstones) and their bytes, as the limits count them.
    private(set) var totals = StoreTotals(keys: 0, bytes: 0)
    /// Every applied entry's sequence number and row in `entries`, in sequence order; an element
    /// is current while its row still holds an entry of that sequence number (older ones are
    /// skipped, and pruned once they are most of the log). Catch-up reads it with a binary search.
    private var sequenceLog: [(sequence: Int64, row: Int32)] = []
    /// The sum of every entry's fingerprint, kept up to date on each apply (see `digest`).
    private(set) var fingerprintSum: UInt64 = 0
    /// The same sum per bucket of keys (`bucket(of:)`), for anti-entropy to find where two
    /// replicas differ without comparing every entry.
    private(set) var bucketSums = [UInt64](repeating: 0, count: Self.bucketCount)

    /// How many buckets the keys are spread over: at a million keys, a bucket holds about 250.
    package static let bucketCount = 4096

    /// The bucket of `key`, the same on every replica.
    package static func bucket(of key: String) -> Int {
        var fingerprint = Fingerprint()
        fingerprint.mix(text: key)
        return Int(truncatingIfNeeded: fingerprint.value >> 52)
    }

    package init(entries: [SettingEntry], policy: SettingsPolicy = SettingsPolicy()) {
        self.policy = policy
        apply(entries)
        finishLoading()
    }

    /// Makes room for `count` entries in all, before a load applies them in chunks.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        sequenceLog.reserveCapacity(count)
    }

    /// Puts the sequence log in order after a load, which applies entries in the file's order.
    mutating func finishLoading() {
        sequenceLog.sort { $0.sequence < $1.sequence }
    }

    /// Replaces the entries of `batch`, growing the table once for the whole batch.
    mutating func apply(_ batch: [SettingEntry]) {
        if batch.count > 1 { entries.reserveCapacity(entries.count + batch.count) }
        // A large batch (a store opening, an initial sync) lands all over the index: each group's
        // slots are read together first, so their cache misses overlap.
        let touches = batch.count >= Self.touchedGroup * 4
        var start = batch.startIndex
        while start < batch.endIndex {
            let group = batch[start..<Swift.min(start + Self.touchedGroup, batch.endIndex)]
            if touches { entries.touchSlots(of: group.lazy.map(\.key)) }
            for entry in group { apply(entry) }
            start = group.endIndex
        }
    }

    /// How many keys' index slots a large batch reads ahead at once.
    private static let touchedGroup = 16

    /// The effective value: a lock's, else the stored value, else the defaults' layers
    /// (system, registered, schema), else nil.
    func value(forKey key: String) -> SettingValue? {
        guard !policy.isEmpty else { return entries.value(forKey: key) ?? defaults[key] }
        return resolve(key, stored: entries.value(forKey: key), registered: defaults[key]).value
    }

    /// What overrides an app's own default for `key`: a lock's value, the stored value, or a
    /// system default (typed keys fall back to their declared default after these).
    func overridingValue(forKey key: String) -> SettingValue? {
        guard !policy.isEmpty else { return entries.value(forKey: key) }
        let resolved = resolve(key, stored: entries.value(forKey: key), registered: nil)
        switch resolved.source {
        case .locked, .mandatoryPolicy, .user, .systemDefault, .recommendedPolicy: return resolved.value
        case .registeredDefault, .schemaDefault, .unset: return nil
        }
    }

    /// The one order of the layers: `key`'s effective value and where it comes from, given
    /// `stored` as its user value and `registered` as the app's default (see `SettingsPolicy`).
    func resolve(
        _ key: String, stored: SettingValue?, registered: SettingValue?
    ) -> (value: SettingValue?, source: Settings.ValueSource) {
        var winner: (value: SettingValue?, source: Settings.ValueSource) = (nil, .unset)
        visitLayers(of: key, stored: stored, registered: registered) { value, source in
            winner = (value, source)
            return false
        }
        return winner
    }

    /// Every layer that holds a value for `key`, the winner first.
    func layers(of key: String, stored: SettingValue?, registered: SettingValue?)
        -> [(value: SettingValue?, source: Settings.ValueSource)]
    {
        var found: [(value: SettingValue?, source: Settings.ValueSource)] = []
        visitLayers(of: key, stored: stored, registered: registered) { value, source in
            found.append((value, source))
            return true
        }
        return found
    }

    /// Calls `visit` with each layer that holds a value for `key`, in the one order, until it
    /// returns false (a read stops at the first: nothing is allocated). A lock pins the system
    /// default (else the schema's, else the value the key holds: a lock with no default to pin
    /// freezes what is there rather than hide it).
    private func visitLayers(
        of key: String, stored: SettingValue?, registered: SettingValue?,
        _ visit: (SettingValue?, Settings.ValueSource) -> Bool
    ) {
        let system = policy.systemDefaults[key]
        if let lock = policy.lock(forKey: key),
            !visit(
                system?.value ?? policy.schema.rule(forKey: key)?.defaultValue ?? stored,
                .locked(file: lock.file))
        {
            return
        }
        let fleet = policy.fleet.isEmpty ? nil : policy.fleet.settings[key]
        if let fleet, fleet.level == .mandatory,
            !visit(fleet.value, .mandatoryPolicy(name: fleet.policy, revision: fleet.revision))
        {
            return
        }
        if let stored, !visit(stored, .user) { return }
        if let system, !visit(system.value, .systemDefault(file: system.file)) { return }
        if let fleet, fleet.level == .recommended,
            !visit(fleet.value, .recommendedPolicy(name: fleet.policy, revision: fleet.revision))
        {
            return
        }
        if let registered, !visit(registered, .registeredDefault) { return }
        if let rule = policy.schema.rule(forKey: key), let value = rule.defaultValue {
            _ = visit(value, .schemaDefault(file: rule.file))
        }
    }

    /// Replaces a key's entry, keeping the totals right.
    mutating func apply(_ entry: SettingEntry) {
        let (previous, row) = entries.updateValue(entry, forKey: entry.key)
        if isShared(entry.key) {
            let bucket = Self.bucket(of: entry.key)
            if let previous {
                let old = Fingerprint.of(previous)
                fingerprintSum &-= old
                bucketSums[bucket] &-= old
            }
            let new = Fingerprint.of(entry)
            fingerprintSum &+= new
            bucketSums[bucket] &+= new
        }
        sequenceLog.append((entry.sequence, row))
        if sequenceLog.count > 2 * entries.count + 1024 {
            sequenceLog.removeAll { self.entries.sequence(inRow: $0.row) != $0.sequence }
        }
        totals = totals.replacing(key: entry.key, old: previous?.value, with: entry.value)
    }

    /// The live keys starting with `prefix`, sorted.
    func keys(withPrefix prefix: String) -> [String] {
        entries.liveKeys(withPrefix: prefix).sorted()
    }

    /// The highest sequence number present, and the highest timestamp not above `ceiling`.
    func highWater(ceiling: HybridTimestamp) -> (sequence: Int64, timestamp: HybridTimestamp) {
        entries.highWater(ceiling: ceiling)
    }

    /// The current entries with a sequence number above `sequence`, in sequence order, at most `limit`.
    package func entries(after sequence: Int64, limit: Int) -> [SettingEntry] {
        var low = 0
        var high = sequenceLog.count
        while low < high {
            let middle = (low + high) / 2
            if sequenceLog[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        var result: [SettingEntry] = []
        for (entrySequence, row) in sequenceLog[low...] {
            guard entries.sequence(inRow: row) == entrySequence, let entry = entries.entry(inRow: row) else {
                continue
            }
            result.append(entry)
            if result.count == limit { break }
        }
        return result
    }

    /// An order-independent fingerprint of every entry (tombstones and versions included):
    /// two replicas with equal digests hold the same state. Kept up to date incrementally.
    var digest: String {
        let text = String(fingerprintSum, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// The entries (tombstones included) whose keys fall in `buckets`.
    package func entries(inBuckets buckets: Set<Int>) -> [SettingEntry] {
        entries.entries { buckets.contains(Self.bucket(of: $0)) && isShared($0) }
    }

    /// Whether `key` is compared with other replicas: every key but those of scope `local`,
    /// which each replica keeps to itself (so they are left out of the digest).
    func isShared(_ key: String) -> Bool {
        policy.isEmpty || !policy.isLocal(key)
    }

    /// Sums every shared entry's fingerprint again, after the policy changed which keys are local.
    mutating func recomputeFingerprints() {
        fingerprintSum = 0
        bucketSums = [UInt64](repeating: 0, count: Self.bucketCount)
        for entry in entries.values where isShared(entry.key) {
            let fingerprint = Fingerprint.of(entry)
            fingerprintSum &+= fingerprint
            bucketSums[Self.bucket(of: entry.key)] &+= fingerprint
        }
    }

    /// The tombstones stamped below `cutoff`.
    func tombstones(below cutoff: HybridTimestamp) -> [SettingEntry] {
        entries.tombstones(below: cutoff)
    }

    /// Forgets the given tombstones (see `tombstones(below:)`).
    mutating func remove(_ tombstones: [SettingEntry]) {
        for entry in tombstones {
            entries.removeValue(forKey: entry.key)
            guard isShared(entry.key) else { continue }
            let fingerprint = Fingerprint.of(entry)
            fingerprintSum &-= fingerprint
            bucketSums[Self.bucket(of: entry.key)] &-= fingerprint
        }
    }
}
