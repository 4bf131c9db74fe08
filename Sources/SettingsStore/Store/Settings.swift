import Synchronization

/// A replica of typed settings: reads from memory, writes durable in SQLite, changes announced
/// per key with their reason.
///
/// ```swift
/// extension SettingKeys {
///     static let volume = SettingKey<Double>("audio.volume", default: 0.5)
/// }
/// let settings = try Settings(path: "/home/me/.local/share/myapp/settings.sqlite")
/// try settings.set(0.8, for: .volume)
/// settings[.volume]                            // 0.8, from memory
/// try settings.update(.volume) { $0 += 0.1 }   // atomic read-modify-write
/// let token = settings.observe(.volume) { change in print(change.reason) }
/// ```
///
/// A `Settings` is safe to use from any thread or task. Only one live store may hold a database
/// file at a time; a second one, in this process or another, is refused with `databaseInUse`.
public final class Settings: Sendable {
    /// This replica's persistent identity. It changes only when the replica finds that its file
    /// was restored from a backup or copied (see `docs/SYNC.md`).
    public var replicaID: ReplicaID {
        identity.withLock { $0 }
    }
    /// The database file, or nil for an in-memory store.
    public let path: String?
    /// The configuration the store was opened with.
    public let configuration: SettingsConfiguration

    let writer: Mutex<SettingsWriter>
    /// The writer's last sequence number and history count, readable without its lock.
    let gauges: WriterGauges
    /// The replica id, changed only under the writer lock.
    let identity: Mutex<ReplicaID>
    let cache: Mutex<ReplicaCache>
    let observers = ObserverRegistry()
    /// The names replicas are known by, read from the backend on first use (`Settings+Names`).
    let replicaNames = Mutex<[ReplicaID: String]?>(nil)
    /// When a local transaction last asked for the writer, in monotonic nanoseconds (0: never):
    /// while that is recent, a replica session commits a large batch in parts.
    let lastLocalWriteRequest = Atomic<UInt64>(0)
    /// The key of the history's fingerprints of `secret` values (`FingerprintKey`).
    let fingerprintKey: FingerprintKey
    /// The last sequence number when the store opened. Numbers up to it that no entry holds
    /// (rows lost from a damaged file) carry nothing, and streams count them as sent; a number
    /// given out since always has its entry (read `sequence` instead, and a stream could skip an
    /// entry numbered a moment before it reaches the cache).
    package let openedSequence: Int64

    /// Opens the database at `path`, creating it and its folders if needed (a read-only
    /// configuration creates nothing and needs the file to exist).
    ///
    /// - Throws: `SettingsError` with code `databaseInUse` when another live store holds the file,
    ///   `corruptDatabase` when it is not a settings database (the file is left untouched), `unsupportedSchema` when a newer
    ///   version wrote it, `readOnly` or `io` when it cannot be created or opened.
    public convenience init(path: String, configuration: SettingsConfiguration = .init())
        throws(SettingsError)
    {
        // Nothing is created or changed beside a file that is not ours, or for a reader.
        switch try DatabaseHeader.read(path, applicationID: Schema.applicationID) {
        case .foreign(let reason): throw SettingsError(.corruptDatabase, reason, path: path)
        case .absent where configuration.isReadOnly:
            throw SettingsError(.io, "'\(path)' does not exist", path: path)
        case .absent, .settingsStore: break
        }
        if configuration.isReadOnly {
            let backend = try SQLiteBackend(readingPath: path)
            try self.init(backend: backend, lock: nil, path: path, configuration: configuration)
            return
        }
        try FileSystem.createDirectories(FileSystem.parent(of: path))
        let lock = try OwnerLock(database: path)
        try FileSystem.createFileIfMissing(path)
        let backend = try SQLiteBackend(path: path, durability: configuration.durability)
        try self.init(backend: backend, lock: lock, path: path, configuration: configuration)
        // Housekeeping that a full disk must not turn into a store that cannot open.
        do throws(SettingsError) {
            try collectTombstones()
            while try pruneHistory() > 0 {}
        } catch  where error.code == .diskFull {}
    }

    /// Creates a store that lives in memory only, with a new replica identity.
    public convenience init(inMemoryWith configuration: SettingsConfiguration = .init()) {
        let backend = MemoryBackend(replicaID: .random())
        let loaded = backend.load(streamingTo: nil)
        self.init(
            loaded: loaded, cache: ReplicaCache(entries: [], policy: configuration.policy), backend: backend,
            lock: nil, path: nil, configuration: configuration)
    }

    private convenience init(
        backend: sending any SettingsBackend, lock: sending OwnerLock?, path: String?,
        configuration: SettingsConfiguration
    ) throws(SettingsError) {
        // The cache is built on another core while the backend still reads the file.
        let builder = ReplicaCacheBuilder(policy: configuration.policy)
        var loaded = try backend.load(streamingTo: builder)
        let cache =
            loaded.isStreamed
            ? builder.finish() : ReplicaCache(entries: loaded.entries, policy: configuration.policy)
        loaded.entries = []
        let count = cache.entries.count
        self.init(
            loaded: loaded, cache: cache, backend: backend, lock: lock, path: path,
            configuration: configuration)
        // The loaded entries (a key string each) are gone now; the table keeps their bytes.
        if count >= HeapRelease.bulkLoadEntries { HeapRelease.returnFreedMemory() }
    }

    private init(
        loaded: LoadedReplica, cache: consuming ReplicaCache, backend: sending any SettingsBackend,
        lock: sending OwnerLock?, path: String?, configuration: SettingsConfiguration
    ) {
        // A stamp a wild peer clock left on disk must not drag this clock along on every
        // restart: the clock resumes from the highest stamp within the bound, and writes to the
        // wild stamp's key still beat it (`SettingsWriter.stamp`).
        let bound = HybridTimestamp(
            milliseconds: configuration.clock() + configuration.maximumClockSkewMilliseconds, counter: 0)
        let highWater = cache.highWater(ceiling: bound)
        self.identity = Mutex(loaded.replicaID)
        self.fingerprintKey = loaded.fingerprintKey
        self.path = path
        self.configuration = configuration
        self.cache = Mutex(cache)
        // The file's own last number when rows holding the highest vanished (a damaged file).
        let lastSequence = max(highWater.sequence, loaded.lastSequence)
        self.openedSequence = lastSequence
        let gauges = WriterGauges(lastSequence: lastSequence, historyCount: loaded.historyCount)
        self.gauges = gauges
        self.writer = Mutex(
            SettingsWriter(
                backend: backend, ownerLock: lock,
                clock: HybridLogicalClock(last: highWater.timestamp, wallMilliseconds: configuration.clock),
                gauges: gauges, lastSequence: lastSequence, peers: loaded.peers,
                lineage: loaded.lineage,
                tombstoneHorizon: loaded.tombstoneHorizon, historyCount: loaded.historyCount,
                account: loaded.account))
    }

    /// A name for messages: the path, or `<memory>`.
    var displayPath: String { path ?? "<memory>" }

    /// Closes the database and releases the file for another store; later writes throw `closed`.
    /// Reads keep answering from memory. Closing happens on deinit too.
    public func close() {
        writer.withLock { writer in
            writer.backend = nil
            writer.ownerLock = nil
        }
    }

    /// The stored value for `key`, or its registered default, or nil.
    public func value(forKey key: String) -> SettingValue? {
        cache.withLock { $0.value(forKey: key) }
    }

    /// The stored value for `key`, or its registered default, or nil: the same as
    /// `value(forKey:)`.
    public subscript(key: String) -> SettingValue? {
        value(forKey: key)
    }

    /// The value stored for `key`, ignoring registered defaults; nil when none is stored.
    public func storedValue(forKey key: String) -> SettingValue? {
        cache.withLock { $0.entries.value(forKey: key) }
    }

    /// The value stored for `key` with the version that wrote it; nil when none is stored (a
    /// default alone does not count). What a compare-and-set compares (`SettingPrecondition`).
    public func versionedValue(forKey key: String) -> VersionedValue? {
        cache.withLock { cache in
            guard let entry = cache.entries[key], let value = entry.value else {
                return nil
            }
            return VersionedValue(value: value, version: entry.version)
        }
    }

    /// The effective value of `key` and the version of its stored value (nil: none stored), read
    /// together: a compare-and-set of what was read needs both from one moment.
    package func effectiveValueAndStoredVersion(forKey key: String) -> (
        value: SettingValue?, version: SettingVersion?
    ) {
        cache.withLock { cache in
            let entry = cache.entries[key]
            return (cache.value(forKey: key), entry?.value == nil ? nil : entry?.version)
        }
    }

    /// The stored entry for `key` with its version, tombstones included; nil if never written.
    package func entry(forKey key: String) -> SettingEntry? {
        cache.withLock { $0.entries[key] }
    }

    /// Whether `key` holds a stored value (a default alone does not count).
    public func containsValue(forKey key: String) -> Bool {
        cache.withLock { $0.entries[key]?.value != nil }
    }

    /// The keys holding values that start with `prefix`, sorted.
    public func keys(withPrefix prefix: String = "") -> [String] {
        cache.withLock { $0.keys(withPrefix: prefix) }
    }

    /// Every stored value (defaults excluded), for export or display.
    public func snapshot() -> [String: SettingValue] {
        cache.withLock { cache in
            var values: [String: SettingValue] = [:]
            values.reserveCapacity(cache.totals.keys)
            for (key, entry) in cache.entries {
                if let value = entry.value { values[key] = value }
            }
            return values
        }
    }

    /// How many keys hold values, and the bytes they take against `maximumTotalBytes`.
    package var usage: StoreTotals {
        cache.withLock { $0.totals }
    }

    /// The highest local sequence number applied so far.
    package var sequence: Int64 {
        gauges.lastSequence
    }

    /// Adds values to the registration layer: read when a key has no stored value, never
    /// written to disk, never synced. Later registrations replace earlier ones per key.
    public func register(defaults: [String: SettingValue]) {
        cache.withLock { $0.defaults.merge(defaults) { $1 } }
    }

    /// Stores `value` for `key`; `nil` (an empty `Optional`) removes the key.
    public func set<Value: SettingValueConvertible>(_ value: Value, forKey key: String) throws(SettingsError)
    {
        try typed { try transaction { try $0.set(value, forKey: key) } }
    }

    /// Removes the stored value for `key`, so reads return its default again (a `.local` write).
    public func removeValue(forKey key: String) throws(SettingsError) {
        try typed { try transaction { try $0.removeValue(forKey: key) } }
    }

    /// Removes every stored value (reason `.reset`), except locked keys (their value is the
    /// administrator's anyway); defaults stay registered.
    public func reset() throws(SettingsError) {
        let policy = self.policy
        try typed {
            try transaction(reason: .reset) { transaction in
                for key in keys() where policy.lock(forKey: key) == nil {
                    try transaction.removeValue(forKey: key)
                }
            }
        }
    }

    /// Writes `values` in one transaction with reason `.import`; with `replacingExisting`, keys
    /// not in `values` are removed in the same transaction. Locked keys are left as they are.
    ///
    /// - Returns: The locked keys that were skipped, sorted.
    @discardableResult
    public func importValues(_ values: [String: SettingValue], replacingExisting: Bool = false)
        throws(SettingsError) -> [String]
    {
        try typed {
            try transaction(reason: .import) { transaction in
                try transaction.importValues(values, replacingExisting: replacingExisting)
            }
        }
    }
}
