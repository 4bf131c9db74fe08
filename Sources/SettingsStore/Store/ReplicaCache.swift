/// The in-memory image of a replica that every read is served from: all entries (tombstones
/// included), the registered defaults, and running totals for the limits.
struct ReplicaCache {
    private(set) var entries: [String: SettingEntry] = [:]
    var defaults: [String: SettingValue] = [:]
    /// Keys that hold a value (not tombstones).
    private(set) var liveCount = 0
    /// Bytes of all live keys and their stored values, as counted by `maximumTotalBytes`.
    private(set) var totalBytes = 0

    init(entries: [SettingEntry]) {
        apply(entries)
    }

    /// Replaces the entries of `batch`, growing the table once for the whole batch.
    mutating func apply(_ batch: [SettingEntry]) {
        if batch.count > 1 { entries.reserveCapacity(entries.count + batch.count) }
        for entry in batch { apply(entry) }
    }

    /// The stored value, or the registered default, or nil.
    func value(forKey key: String) -> SettingValue? {
        entries[key]?.value ?? defaults[key]
    }

    /// Replaces a key's entry, keeping the totals right.
    mutating func apply(_ entry: SettingEntry) {
        let previous = entries.updateValue(entry, forKey: entry.key)
        if let old = previous?.value {
            liveCount -= 1
            totalBytes -= Self.footprint(key: entry.key, value: old)
        }
        if let new = entry.value {
            liveCount += 1
            totalBytes += Self.footprint(key: entry.key, value: new)
        }
    }

    /// What a live key counts against `maximumTotalBytes`.
    static func footprint(key: String, value: SettingValue) -> Int {
        key.utf8.count + value.storageSize
    }

    /// The live keys starting with `prefix`, sorted.
    func keys(withPrefix prefix: String) -> [String] {
        entries.values.lazy.filter { $0.value != nil && $0.key.hasPrefix(prefix) }.map(\.key).sorted()
    }

    /// The highest sequence number and timestamp present.
    var highWater: (sequence: Int64, timestamp: HybridTimestamp) {
        entries.values.reduce((0, HybridTimestamp.zero)) { result, entry in
            (max(result.0, entry.sequence), max(result.1, entry.version.timestamp))
        }
    }
}
