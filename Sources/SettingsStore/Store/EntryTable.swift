/// Every entry of a replica by key, in a fraction of the memory of a `[String: SettingEntry]`:
/// keys live as bytes in a `KeyIndex` that maps them to row numbers, the rows sit in one array
/// (40 bytes each), and a version's replica id (16 bytes) is a number into a table of the few
/// replicas there are.
///
/// A store opens with every entry in memory: at a million keys, a whole process opening the store
/// peaked at 362 MB with a dictionary of entries and 261 MB with string keys mapped to rows.
struct EntryTable: Sequence {
    /// An entry without its key (the index holds it) and with its replica interned.
    private struct Row {
        var value: SettingValue?
        var replica: UInt32
        var timestamp: UInt64
        var sequence: Int64
    }

    private var index = KeyIndex()
    private var rows: [Row] = []
    /// Rows of removed entries, reused first.
    private var freeRows: [Int32] = []
    private var replicas: [ReplicaID] = []
    private var replicaNumbers: [ReplicaID: UInt32] = [:]

    /// How many entries there are.
    var count: Int { index.count }

    /// The keys, in no particular order.
    var keys: some Sequence<String> {
        index.rows.lazy.map { [index] in index.key(ofRow: $0) }
    }

    /// The entries, in no particular order.
    var values: some Sequence<SettingEntry> {
        index.rows.lazy.map { [index, rows, replicas] row in
            Self.entry(index.key(ofRow: row), rows[Int(row)], replicas)
        }
    }

    /// `key`'s entry.
    subscript(key: String) -> SettingEntry? {
        guard let row = index.row(of: key) else { return nil }
        return Self.entry(key, rows[Int(row)], replicas)
    }

    /// `key`'s stored value (nil for a tombstone or an absent key), without building its entry.
    func value(forKey key: String) -> SettingValue? {
        guard let row = index.row(of: key) else { return nil }
        return rows[Int(row)].value
    }

    /// The sequence number of the entry in `row`, or nil when the row holds none.
    func sequence(inRow row: Int32) -> Int64? {
        index.holdsKey(row) ? rows[Int(row)].sequence : nil
    }

    /// The entry in `row`, or nil when the row holds none.
    func entry(inRow row: Int32) -> SettingEntry? {
        index.holdsKey(row) ? Self.entry(index.key(ofRow: row), rows[Int(row)], replicas) : nil
    }

    /// The entries whose keys satisfy `isIncluded` (only those are built into entries).
    package func entries(whereKey isIncluded: (String) -> Bool) -> [SettingEntry] {
        index.rows.compactMap { row in
            let key = index.key(ofRow: row)
            return isIncluded(key) ? Self.entry(key, rows[Int(row)], replicas) : nil
        }
    }

    /// The keys starting with `prefix` (compared in their normal form) whose entries hold a value.
    func liveKeys(withPrefix prefix: String) -> [String] {
        let prefix = Array(KeyIdentity.normalize(prefix).utf8)
        return index.rows.compactMap { row in
            guard rows[Int(row)].value != nil, index.key(ofRow: row, hasPrefix: prefix) else { return nil }
            return index.key(ofRow: row)
        }
    }

    /// The tombstones stamped below `cutoff` (only those are built into entries).
    func tombstones(below cutoff: HybridTimestamp) -> [SettingEntry] {
        index.rows.compactMap { row in
            let entry = rows[Int(row)]
            guard entry.value == nil, entry.timestamp < cutoff.rawValue else { return nil }
            return Self.entry(index.key(ofRow: row), entry, replicas)
        }
    }

    /// The highest sequence number, and the highest timestamp not above `ceiling`.
    func highWater(ceiling: HybridTimestamp) -> (sequence: Int64, timestamp: HybridTimestamp) {
        var sequence: Int64 = 0
        var timestamp: UInt64 = 0
        for row in index.rows {
            let entry = rows[Int(row)]
            sequence = Swift.max(sequence, entry.sequence)
            if entry.timestamp <= ceiling.rawValue { timestamp = Swift.max(timestamp, entry.timestamp) }
        }
        return (sequence, HybridTimestamp(rawValue: timestamp))
    }

    /// Brings the index's slots for `keys` into the cache together (see `KeyIndex.touchSlots`).
    func touchSlots(of keys: some Collection<String>) {
        index.touchSlots(of: keys)
    }

    /// Makes room for `capacity` entries in all. Growth stays geometric: an array reserves
    /// exactly what it is asked, so reserving a little more per batch would copy every row each time.
    mutating func reserveCapacity(_ capacity: Int) {
        index.reserveCapacity(capacity)
        if capacity > rows.capacity { rows.reserveCapacity(Swift.max(capacity, rows.capacity * 2)) }
    }

    /// Sets `key`'s entry; returns the one it replaced and the row the entry is in.
    @discardableResult
    mutating func updateValue(_ entry: SettingEntry, forKey key: String) -> (
        replaced: SettingEntry?, row: Int32
    ) {
        let row = Row(
            value: entry.value, replica: number(of: entry.version.replica),
            timestamp: entry.version.timestamp.rawValue, sequence: entry.sequence)
        let fresh = freeRows.last ?? Int32(rows.count)
        let (slot, inserted) = index.row(of: key, insertingInto: fresh)
        guard inserted else {
            let previous = Self.entry(key, rows[Int(slot)], replicas)
            rows[Int(slot)] = row
            return (previous, slot)
        }
        if freeRows.popLast() != nil {
            rows[Int(slot)] = row
        } else {
            rows.append(row)
        }
        return (nil, slot)
    }

    /// Removes `key`'s entry; returns it.
    @discardableResult
    mutating func removeValue(forKey key: String) -> SettingEntry? {
        guard let row = index.remove(key) else { return nil }
        let removed = Self.entry(key, rows[Int(row)], replicas)
        rows[Int(row)].value = nil  // frees the value's storage now
        freeRows.append(row)
        return removed
    }

    func makeIterator() -> some IteratorProtocol<(key: String, value: SettingEntry)> {
        index.rows.lazy.map { [index, rows, replicas] row in
            let key = index.key(ofRow: row)
            return (key, Self.entry(key, rows[Int(row)], replicas))
        }.makeIterator()
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
