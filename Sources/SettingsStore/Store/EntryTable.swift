/// Every entry of a replica by key, in about half the memory of a `[String: SettingEntry]`: the
/// hash table maps a key to a row number (4 bytes a bucket rather than 72), the rows sit in one
/// array (40 bytes each), and a version's replica id (16 bytes) is a number into a table of the
/// few replicas there are.
///
/// A store opens with every entry in memory: at a million keys, a whole process opening the store
/// peaked at 362 MB with a dictionary of entries and peaks at 261 MB with this table.
struct EntryTable: Sequence {
    /// An entry without its key (the hash table holds it) and with its replica interned.
    private struct Row {
        var value: SettingValue?
        var replica: UInt32
        var timestamp: UInt64
        var sequence: Int64
    }

    private var rowByKey: [String: Int32] = [:]
    private var rows: [Row] = []
    /// Rows of removed entries, reused first.
    private var freeRows: [Int32] = []
    private var replicas: [ReplicaID] = []
    private var replicaNumbers: [ReplicaID: UInt32] = [:]

    /// How many entries there are.
    var count: Int { rowByKey.count }

    /// The keys, in no particular order.
    var keys: Dictionary<String, Int32>.Keys { rowByKey.keys }

    /// The entries, in no particular order.
    var values: LazyMapSequence<[String: Int32], SettingEntry> {
        rowByKey.lazy.map { [rows, replicas] key, row in Self.entry(key, rows[Int(row)], replicas) }
    }

    /// `key`'s entry.
    subscript(key: String) -> SettingEntry? {
        guard let row = rowByKey[key] else { return nil }
        return Self.entry(key, rows[Int(row)], replicas)
    }

    /// `key`'s stored value (nil for a tombstone or an absent key), without building its entry.
    func value(forKey key: String) -> SettingValue? {
        guard let row = rowByKey[key] else { return nil }
        return rows[Int(row)].value
    }

    /// The entries whose keys satisfy `isIncluded` (only those are built into entries).
    func entries(whereKey isIncluded: (String) -> Bool) -> [SettingEntry] {
        rowByKey.compactMap { key, index in
            isIncluded(key) ? Self.entry(key, rows[Int(index)], replicas) : nil
        }
    }

    /// The tombstones stamped below `cutoff` (only those are built into entries).
    func tombstones(below cutoff: HybridTimestamp) -> [SettingEntry] {
        rowByKey.compactMap { key, index in
            let row = rows[Int(index)]
            guard row.value == nil, row.timestamp < cutoff.rawValue else { return nil }
            return Self.entry(key, row, replicas)
        }
    }

    /// The highest sequence number, and the highest timestamp not above `ceiling`.
    func highWater(ceiling: HybridTimestamp) -> (sequence: Int64, timestamp: HybridTimestamp) {
        var sequence: Int64 = 0
        var timestamp: UInt64 = 0
        for index in rowByKey.values {
            let row = rows[Int(index)]
            sequence = Swift.max(sequence, row.sequence)
            if row.timestamp <= ceiling.rawValue { timestamp = Swift.max(timestamp, row.timestamp) }
        }
        return (sequence, HybridTimestamp(rawValue: timestamp))
    }

    /// Makes room for `capacity` entries in all. Growth stays geometric: an array reserves
    /// exactly what it is asked, so reserving a little more per batch would copy every row each time.
    mutating func reserveCapacity(_ capacity: Int) {
        rowByKey.reserveCapacity(capacity)
        if capacity > rows.capacity { rows.reserveCapacity(Swift.max(capacity, rows.capacity * 2)) }
    }

    /// Sets `key`'s entry; returns the one it replaced.
    @discardableResult
    mutating func updateValue(_ entry: SettingEntry, forKey key: String) -> SettingEntry? {
        let row = Row(
            value: entry.value, replica: number(of: entry.version.replica),
            timestamp: entry.version.timestamp.rawValue, sequence: entry.sequence)
        // One hash for lookup and insertion: a new key takes `fresh`, which no key holds yet.
        let fresh = freeRows.last ?? Int32(rows.count)
        let index = Self.value(of: &rowByKey[key, default: fresh])
        guard index == fresh else {
            let previous = Self.entry(key, rows[Int(index)], replicas)
            rows[Int(index)] = row
            return previous
        }
        if freeRows.popLast() != nil {
            rows[Int(index)] = row
        } else {
            rows.append(row)
        }
        return nil
    }

    private static func value(of slot: inout Int32) -> Int32 { slot }

    /// Removes `key`'s entry; returns it.
    @discardableResult
    mutating func removeValue(forKey key: String) -> SettingEntry? {
        guard let index = rowByKey.removeValue(forKey: key) else { return nil }
        let removed = Self.entry(key, rows[Int(index)], replicas)
        rows[Int(index)].value = nil  // frees the value's storage now
        freeRows.append(index)
        return removed
    }

    func makeIterator() -> some IteratorProtocol<(key: String, value: SettingEntry)> {
        rowByKey.lazy.map { [rows, replicas] key, row in (key, Self.entry(key, rows[Int(row)], replicas)) }
            .makeIterator()
    }

    private mutating func number(of replica: ReplicaID) -> UInt32 {
        // Entries mostly come in runs from one replica: check the last one before hashing.
        if let last = replicas.indices.last, replicas[last] == replica { return UInt32(last) }
        if let number = replicaNumbers[replica] { return number }
        let number = UInt32(replicas.count)
        replicas.append(replica)
        replicaNumbers[replica] = number
        return number
    }

    private static func entry(_ key: String, _ row: Row, _ replicas: [ReplicaID]) -> SettingEntry {
        SettingEntry(
            key: key, value: row.value,
            version: SettingVersion(
                timestamp: HybridTimestamp(rawValue: row.timestamp), replica: replicas[Int(row.replica)]),
            sequence: row.sequence)
    }
}
