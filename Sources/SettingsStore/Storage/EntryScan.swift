/// The one read of a store's whole `entries` table, when it opens.
///
/// With a sink and more than one chunk of rows, the entries go to the sink in chunks as the rows
/// are read, so the cache can be built on another core meanwhile (`ReplicaCacheBuilder`); they
/// are kept too, and returned whole instead, when a key in another normal form means the load
/// must merge key twins first.
struct EntryScan {
    /// The entries, unless `isStreamed`: then the sink has them and this is empty.
    var entries: [SettingEntry] = []
    /// Whether the sink received every entry, each key once.
    var isStreamed = false
    /// The highest sequence number among the entries (0: none).
    var newest: Int64 = 0
    /// The replica of the last entry read, if any.
    var lastReplica: ReplicaID?

    /// Entries per chunk handed to a sink: enough that handing one over costs nothing beside
    /// applying it, few enough that the sink starts early.
    static let chunkEntries = 16_384

    /// How much of the file the scan may map (SQLite maps no more than the file).
    private static let mappingBytes = 1 << 30

    /// Reads every row of `connection`'s `entries`; `knownReplica` (the store's own id) is the
    /// first guess for the rows' replica ids, which are decoded only when their bytes differ.
    static func read(
        _ connection: SQLiteConnection, knowing knownReplica: ReplicaID?,
        streamingTo sink: (any LoadedEntriesSink)?
    ) throws(SettingsError) -> EntryScan {
        // Read mapped, not copied page by page through pread (a tenth of opening a million
        // keys); afterwards the connection reads as before, so an I/O error later is an error,
        // not a SIGBUS.
        try connection.execute("PRAGMA mmap_size = \(mappingBytes)")
        let select = try connection.prepare("SELECT key, value, hlc, replica, seq FROM entries")
        let count = Int(try connection.scalar("SELECT count(*) FROM entries") ?? 0)
        // A table of one chunk is read faster than another thread would start on it.
        let sink = count > chunkEntries ? sink : nil
        var scan = EntryScan()
        var chunks: [[SettingEntry]] = []
        var strayKeys = false
        sink?.expect(count)
        scan.entries.reserveCapacity(sink == nil ? count : min(count, chunkEntries))
        var lastReplica = knownReplica
        while try select.step() {
            let entry = try row(of: select, in: connection, lastReplica: &lastReplica)
            scan.newest = max(scan.newest, entry.sequence)
            // Unstreamed entries are checked for twins by the load itself (`mergeKeyTwins`).
            if sink != nil, !strayKeys, !KeyIdentity.isNormalized(entry.key) { strayKeys = true }
            scan.entries.append(entry)
            if let sink, scan.entries.count == chunkEntries {
                sink.receive(scan.entries)
                chunks.append(scan.entries)
                scan.entries = []
                scan.entries.reserveCapacity(chunkEntries)
            }
        }
        try connection.execute("PRAGMA mmap_size = 0")
        scan.lastReplica = lastReplica
        guard let sink else { return scan }
        if !scan.entries.isEmpty {
            sink.receive(scan.entries)
            chunks.append(scan.entries)
        }
        sink.endOfEntries()
        if strayKeys {
            // The sink's work is thrown away: the caller builds from the merged entries.
            scan.entries = Array(chunks.joined())
        } else {
            scan.entries = []
            scan.isStreamed = true
        }
        return scan
    }

    /// The entry of the row `select` is on.
    private static func row(
        of select: SQLiteStatement, in connection: SQLiteConnection, lastReplica: inout ReplicaID?
    ) throws(SettingsError) -> SettingEntry {
        let key = select.string(at: 0)
        let value: SettingValue?
        do throws(SettingsError) {
            value = try select.storedValue(at: 1)
        } catch {
            throw SettingsError(
                .corruptDatabase, "'\(connection.path)': \(error.message)", key: key, path: connection.path)
        }
        // Most rows come from a handful of replicas: reuse the last decoded id when bytes match.
        let replica = try select.withBytes(at: 3) {
            [lastReplica] (bytes) throws(SettingsError) -> ReplicaID in
            if let lastReplica, lastReplica.hasBytes(bytes) { return lastReplica }
            guard let decoded = ReplicaID(bytes: bytes) else {
                throw SettingsError(
                    .corruptDatabase, "'\(connection.path)': bad replica id for '\(key)'", key: key,
                    path: connection.path)
            }
            return decoded
        }
        lastReplica = replica
        let version = SettingVersion(
            timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: select.int64(at: 2))), replica: replica)
        return SettingEntry(key: key, value: value, version: version, sequence: select.int64(at: 4))
    }
}
