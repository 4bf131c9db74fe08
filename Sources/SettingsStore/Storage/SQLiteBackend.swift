/// The durable backend: one SQLite database in WAL mode, with prepared statements reused for
/// every commit.
final class SQLiteBackend: SettingsBackend {
    private let connection: SQLiteConnection
    private let upsert: SQLiteStatement
    /// `upsert` for `SQLiteConnection.rowsPerStatement` rows at once.
    private let upsertMany: SQLiteStatement
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let saveCursor: SQLiteStatement
    private let history: HistoryTable
    private var replicaBytes = ReplicaBytes()
    private let isReadOnly: Bool
    /// Rows owed to `entries` by commits whose history records hold them (`DeferredEntries`).
    private var deferred = DeferredEntries()
    /// Every record up to this sequence number is reflected in `entries` (`meta.folded_seq`).
    private var foldedSequence: Int64 = 0
    /// The newest sequence number stored, in a record or a row.
    private var lastSequence: Int64 = 0
    private let saveFolded: SQLiteStatement
    /// Checkpoints the log off the commit path (nil for a reader).
    private var checkpointer: WALCheckpointer?
    /// This open's incarnation when a full disk kept it from being stored at once: the first
    /// commit stores it, before anything it writes could be attributed to the previous one.
    private var pendingIncarnation: Incarnation?
    /// The file the path named when it was opened for writing; every commit checks it still does.
    private let identity: FileIdentity?

    /// The file has been checked (`DatabaseHeader`) before this opens it for writing.
    package convenience init(path: String, durability: Durability) throws(SettingsError) {
        let connection = try SQLiteConnection(path: path)
        // The first statement reads the header, so a damaged file fails right here, unchanged.
        try Schema.migrator.check(connection)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        try Schema.migrator.migrate(connection)
        try self.init(connection: connection, isReadOnly: false)
        // Checkpoints (each a copy into the file and an fsync) run beside the commits, not in
        // them; where a second connection cannot open, SQLite's own run in them, as before.
        if let checkpointer = try? WALCheckpointer(path: path) {
            checkpointer.attach(to: connection)
            self.checkpointer = checkpointer
        } else {
            try connection.execute("PRAGMA wal_autocheckpoint = \(WALCheckpointer.stallPages)")
        }
    }

    /// Opens `path` for reading only; when the folder does not let this user create the WAL's
    /// shared-memory file, the file is read as immutable (a consistent image of its last commit).
    package convenience init(readingPath path: String) throws(SettingsError) {
        var connection = try SQLiteConnection(path: path, access: .readOnly)
        do throws(SettingsError) {
            try Schema.migrator.check(connection, requireCurrent: true)
        } catch  where error.code == .readOnly || error.code == .io {
            connection = try SQLiteConnection(path: path, access: .immutable)
            try Schema.migrator.check(connection, requireCurrent: true)
        }
        try self.init(connection: connection, isReadOnly: true)
    }

    private init(connection: SQLiteConnection, isReadOnly: Bool) throws(SettingsError) {
        self.connection = connection
        self.isReadOnly = isReadOnly
        identity = isReadOnly ? nil : FileIdentity.of(connection.path)
        upsert = try connection.prepare(Self.upsertSQL(values: "(?1, ?2, ?3, ?4, ?5)"))
        upsertMany = try connection.prepare(Self.upsertSQL(values: SQLiteConnection.valuesList(columns: 5)))
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        saveCursor = try connection.prepare(
            """
            INSERT INTO peers (replica, received_seq, last_contact_ms, incarnation) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (replica) DO UPDATE SET
                received_seq = excluded.received_seq, last_contact_ms = excluded.last_contact_ms,
                incarnation = excluded.incarnation
            """)
        saveFolded = try connection.prepare(
            "INSERT OR REPLACE INTO meta (name, value) VALUES ('folded_seq', ?1)")
        history = try HistoryTable(connection: connection)
    }

    deinit {
        // Best effort: rows still owed are read back from their records at the next open.
        if !deferred.isEmpty { try? foldOwedRows() }
        checkpointer?.stop(detaching: connection)
    }

    func load(streamingTo sink: (any LoadedEntriesSink)?) throws(SettingsError) -> LoadedReplica {
        // Everything is read before anything is written: a damaged file fails here untouched.
        let existingID = try storedReplicaID()
        foldedSequence = try connection.scalar("SELECT value FROM meta WHERE name = 'folded_seq'") ?? 0
        let recordsOwed = try history.entries(after: foldedSequence)
        var owed = recordsOwed.entries
        // Rows a crash (or a live writer, for a reader) left in the records only change what the
        // scan found after it: such a load keeps its entries and returns them whole.
        let sink = owed.isEmpty ? sink : nil
        var scanned = try EntryScan.read(connection, knowing: existingID, streamingTo: sink)
        var entries = scanned.entries
        scanned.entries = []
        var newer: [SettingEntry] = []
        if !owed.isEmpty {
            for index in entries.indices {
                guard let record = owed.removeValue(forKey: entries[index].key),
                    record.sequence > entries[index].sequence
                else { continue }
                entries[index] = record
                newer.append(record)
            }
            entries.append(contentsOf: owed.values)
            newer.append(contentsOf: owed.values)
            scanned.newest = entries.reduce(0) { max($0, $1.sequence) }
        }
        let newest = scanned.newest
        lastSequence = max(newest, foldedSequence, recordsOwed.last ?? 0)
        if !isReadOnly {
            let owedRows = newer.map { DeferredEntries.Pending(entry: $0, encoded: nil) }
            deferred.committed(records: owedRows.count, deferred: owedRows, direct: [])
        }
        if !scanned.isStreamed { try mergeKeyTwins(&entries) }
        let lastReplica = scanned.lastReplica ?? existingID ?? ReplicaID.random()
        let peers = try loadPeers()
        let replicaID: ReplicaID
        if let existingID {
            replicaID = existingID
        } else if isReadOnly {
            replicaID = lastReplica
        } else {
            replicaID = try createReplicaID()
        }
        let lineage = try beginIncarnation(at: newest)
        let horizon = try connection.scalar("SELECT value FROM meta WHERE name = 'tombstone_horizon'") ?? 0
        if !isReadOnly, recordsOwed.last != nil {
            // Last, after the small writes above: on a full disk the rows stay owed, in memory and
            // in their records, and the store still opens.
            do throws(SettingsError) {
                try foldOwedRows()
            } catch  where error.code == .diskFull {}
        }
        return LoadedReplica(
            replicaID: replicaID, entries: entries, isStreamed: scanned.isStreamed, peers: peers,
            lineage: lineage,
            tombstoneHorizon: HybridTimestamp(rawValue: UInt64(bitPattern: horizon)),
            historyCount: try historyCount(), lastSequence: lastSequence,
            fingerprintKey: try loadFingerprintKey(), account: try loadAccount())
    }

    /// The key of the history's secret fingerprints, made and stored at the first writable open
    /// (a reader, or a full disk, uses a key of its own for the time being: it records nothing
    /// that must match later fingerprints).
    private func loadFingerprintKey() throws(SettingsError) -> FingerprintKey {
        let k0 = try connection.scalar("SELECT value FROM meta WHERE name = 'fingerprint_key_0'")
        let k1 = try connection.scalar("SELECT value FROM meta WHERE name = 'fingerprint_key_1'")
        if let k0, let k1 { return FingerprintKey(k0: UInt64(bitPattern: k0), k1: UInt64(bitPattern: k1)) }
        let key = FingerprintKey.random()
        guard !isReadOnly else { return key }
        let insert = try connection.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)")
        do throws(SettingsError) {
            try connection.transaction { () throws(SettingsError) in
                for (name, word) in [("fingerprint_key_0", key.k0), ("fingerprint_key_1", key.k1)] {
                    try insert.bind(name, at: 1)
                    try insert.bind(Int64(bitPattern: word), at: 2)
                    try insert.run()
                }
            }
        } catch  where error.code == .diskFull {}
        return key
    }

    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) throws(SettingsError) {
        let delete = try connection.prepare("DELETE FROM entries WHERE value IS NULL AND hlc < ?1")
        let record = try connection.prepare(
            "INSERT OR REPLACE INTO meta (name, value) VALUES ('tombstone_horizon', ?1)")
        // Tombstones still owed to `entries` are written first, so they are collected too.
        try foldOwedRows()
        try connection.transaction { () throws(SettingsError) in
            try delete.bind(Int64(bitPattern: cutoff.rawValue), at: 1)
            try delete.run()
            try record.bind(Int64(bitPattern: horizon.rawValue), at: 1)
            try record.run()
        }
    }

    func recordAccount(_ account: SyncAccount, forgetting keys: [String], resettingCursors: Bool)
        throws(SettingsError)
    {
        let delete = try connection.prepare("DELETE FROM entries WHERE key = ?1 AND value IS NULL")
        let record = try connection.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)")
        // Tombstones still owed to `entries` are written first, so they are deleted too.
        try foldOwedRows()
        try connection.transaction { () throws(SettingsError) in
            for key in keys {
                try delete.bind(key, at: 1)
                try delete.run()
            }
            if resettingCursors { try connection.execute("DELETE FROM peers") }
            try record.bind("account_namespace", at: 1)
            try record.bind(account.namespace, at: 2)
            try record.run()
            try record.bind("account_since", at: 1)
            try record.bind(Int64(bitPattern: account.since.rawValue), at: 2)
            try record.run()
        }
    }

    func replicaNames() throws(SettingsError) -> [ReplicaID: String] {
        let select = try connection.prepare(
            "SELECT name, value FROM meta WHERE name >= 'replica_name:' AND name < 'replica_name;'")
        var names: [ReplicaID: String] = [:]
        while try select.step() {
            guard !select.isNull(at: 1),
                let replica = ReplicaID(select.string(at: 0).dropFirst("replica_name:".count).description)
            else { continue }
            names[replica] = select.string(at: 1)
        }
        return names
    }

    func saveName(_ name: String, ofReplica replica: ReplicaID) throws(SettingsError) {
        let record = try connection.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)")
        try record.bind("replica_name:\(replica)", at: 1)
        try record.bind(name, at: 2)
        try record.run()
    }

    func fleetPolicy(from source: String) throws(SettingsError) -> String? {
        let select = try connection.prepare("SELECT value FROM meta WHERE name = ?1")
        try select.bind("fleet_policy:\(source)", at: 1)
        guard try select.step(), !select.isNull(at: 0) else { return nil }
        return select.string(at: 0)
    }

    func saveFleetPolicy(_ text: String?, from source: String) throws(SettingsError) {
        let statement = try connection.prepare(
            text == nil
                ? "DELETE FROM meta WHERE name = ?1"
                : "INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)")
        try statement.bind("fleet_policy:\(source)", at: 1)
        if let text { try statement.bind(text, at: 2) }
        try statement.run()
    }

    /// The hub namespace recorded by `recordAccount`, if any.
    private func loadAccount() throws(SettingsError) -> SyncAccount? {
        let select = try connection.prepare("SELECT value FROM meta WHERE name = 'account_namespace'")
        guard try select.step(), !select.isNull(at: 0) else { return nil }
        let namespace = select.string(at: 0)
        let since = try connection.scalar("SELECT value FROM meta WHERE name = 'account_since'") ?? 0
        return SyncAccount(namespace: namespace, since: HybridTimestamp(rawValue: UInt64(bitPattern: since)))
    }

    /// The stored lineage with a new incarnation begun at `sequence` (stored unless read-only).
    private func beginIncarnation(at sequence: Int64) throws(SettingsError) -> Lineage {
        let select = try connection.prepare("SELECT id, start_seq FROM incarnations ORDER BY ordinal")
        var incarnations: [Incarnation] = []
        while try select.step() {
            guard let id = ReplicaID(bytes: select.bytes(at: 0)) else {
                throw SettingsError(
                    .corruptDatabase, "'\(connection.path)' has a malformed incarnation id",
                    path: connection.path)
            }
            incarnations.append(Incarnation(id: id.uuid, startSequence: select.int64(at: 1)))
        }
        guard !incarnations.isEmpty else {
            let lineage = Lineage(startingAt: sequence)
            if !isReadOnly { try store(lineage, replacing: false) }
            return lineage
        }
        var lineage = Lineage(incarnations)
        guard !isReadOnly else { return lineage }
        let next = lineage.begin(at: sequence)
        do throws(SettingsError) {
            try connection.transaction { () throws(SettingsError) in try insert(next) }
        } catch  where error.code == .diskFull {
            pendingIncarnation = next
        }
        return lineage
    }

    func adopt(_ replicaID: ReplicaID, lineage: Lineage) throws(SettingsError) {
        let update = try connection.prepare(
            "INSERT OR REPLACE INTO meta (name, value) VALUES ('replica_id', ?1)")
        try connection.transaction { () throws(SettingsError) in
            try update.bind(replicaID.bytes, at: 1)
            try update.run()
            try store(lineage, replacing: true)
        }
        pendingIncarnation = nil  // `lineage` holds it.
    }

    private func store(_ lineage: Lineage, replacing: Bool) throws(SettingsError) {
        if replacing { try connection.execute("DELETE FROM incarnations") }
        for incarnation in lineage.incarnations { try insert(incarnation) }
    }

    /// Appends `incarnation` and forgets those beyond `Lineage.limit`; call inside a transaction.
    private func insert(_ incarnation: Incarnation) throws(SettingsError) {
        let insert = try connection.prepare(
            "INSERT INTO incarnations (id, start_seq, opened_ms) VALUES (?1, ?2, ?3)")
        try insert.bind(ReplicaID(incarnation.id).bytes, at: 1)
        try insert.bind(incarnation.startSequence, at: 2)
        try insert.bind(Int64(clamping: WallClock.milliseconds()), at: 3)
        try insert.run()
        try connection.execute(
            "DELETE FROM incarnations WHERE ordinal <= (SELECT max(ordinal) FROM incarnations) - \(Lineage.limit)"
        )
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?, history records: [ChainedRecord])
        throws(SettingsError)
    {
        guard !isReadOnly else {
            throw SettingsError(
                .readOnly, "'\(connection.path)' is open for reading only", path: connection.path)
        }
        try identity?.check(connection.path)
        // Each value is encoded once, for its record and its row alike. A record that holds its
        // entry (same sequence number, value not redacted) lets the row wait for a fold; a large
        // commit writes its rows at once and folds.
        let recorded = records.count == entries.count
        let deferring = recorded && entries.count <= DeferredEntries.largestDeferredCommit
        var waiting: [DeferredEntries.Pending] = []
        var rows: [DeferredEntries.Pending] = []
        // Each record's value as stored: its entry's bytes when it holds that entry.
        var recordValues: [[UInt8]?] = []
        recordValues.reserveCapacity(records.count)
        for (index, entry) in entries.enumerated() {
            let bytes = entry.value?.encoded()
            let change = recorded ? records[index].record : nil
            let holdsEntry = change.map { !$0.isRedacted && $0.sequence == entry.sequence } ?? false
            if let change { recordValues.append(holdsEntry ? bytes : change.value?.encoded()) }
            if deferring, holdsEntry {
                waiting.append(DeferredEntries.Pending(entry: entry, encoded: bytes))
            } else {
                rows.append(DeferredEntries.Pending(entry: entry, encoded: bytes))
            }
        }
        if !recorded { recordValues = records.map { $0.record.value?.encoded() } }
        // Every so many records, and after a large commit, the rows owed are written and the
        // records marked reflected (`folded_seq`).
        let deferredBytes = waiting.reduce(0) { $0 + ($1.encoded?.count ?? 0) }
        let folds =
            !records.isEmpty && (!deferring || deferred.isDue(adding: records.count, bytes: deferredBytes))
        let folded = folds ? entries.last?.sequence : nil
        let statements =
            rows.count + records.count + (cursor == nil ? 0 : 1) + (folded == nil ? 0 : 2)
            + (pendingIncarnation == nil ? 0 : 2)
        guard statements > 1 else {
            // A single statement commits on its own: no explicit transaction to pay for.
            if let row = rows.first { try store(row.entry, encoded: row.encoded) }
            if let cursor { try store(cursor) }
            if let link = records.first { try history.append(link, encoded: recordValues[0]) }
            finish(entries, records: records.count, waiting: waiting, rows: rows, folded: nil)
            return
        }
        try begin.run()
        do {
            if let pendingIncarnation { try insert(pendingIncarnation) }
            try store(rows)
            if let cursor { try store(cursor) }
            try history.append(recordValues, of: records)
            if let folded {
                // Rows owed from earlier commits, unless this one wrote or deferred the key again.
                if !deferred.isEmpty {
                    let written = Set(entries.map(\.key))
                    for (key, pending) in deferred.latest where !written.contains(key) {
                        try store(pending.entry, encoded: pending.encoded)
                    }
                }
                try store(waiting)
                try storeFolded(through: folded)
            }
            try commit.run()
        } catch {
            if connection.isInTransaction {
                try? connection.execute("ROLLBACK")  // The original error is the one worth reporting.
            }
            throw error
        }
        pendingIncarnation = nil
        finish(entries, records: records.count, waiting: waiting, rows: rows, folded: folded)
    }

    /// After a commit of `entries`: the rows now owed (none after a fold), and the newest
    /// sequence number.
    private func finish(
        _ entries: [SettingEntry], records: Int, waiting: [DeferredEntries.Pending],
        rows: [DeferredEntries.Pending], folded: Int64?
    ) {
        if let folded {
            deferred.removeAll()
            foldedSequence = folded
        } else {
            deferred.committed(records: records, deferred: waiting, direct: rows.lazy.map(\.entry.key))
        }
        if let last = entries.last?.sequence { lastSequence = max(lastSequence, last) }
    }

    /// Writes every row owed, in a commit of its own, and marks every record so far reflected.
    private func foldOwedRows() throws(SettingsError) {
        guard lastSequence > foldedSequence else { return }
        try connection.transaction { () throws(SettingsError) in
            for pending in deferred.latest.values { try store(pending.entry, encoded: pending.encoded) }
            try storeFolded(through: lastSequence)
        }
        foldedSequence = lastSequence
        deferred.removeAll()
    }

    private func storeFolded(through sequence: Int64) throws(SettingsError) {
        try saveFolded.bind(sequence, at: 1)
        try saveFolded.run()
    }

    func recentHistory(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        try history.recent(query)
    }

    func historyRecords(after sequence: Int64, limit: Int) throws(SettingsError) -> [HistoryRecord] {
        try history.records(after: sequence, limit: limit)
    }

    func chainedRecord(at sequence: Int64) throws(SettingsError) -> ChainedRecord? {
        try history.record(at: sequence)
    }

    func historyCount() throws(SettingsError) -> Int {
        try history.count()
    }

    func oldestHistoryTime() throws(SettingsError) -> UInt64? {
        try history.oldestTime()
    }

    func pruneHistory(before: UInt64, excess: Int, batch: Int) throws(SettingsError) -> Int {
        // Records whose rows are still owed are kept: fold first, so a short history prunes to
        // its maximum too (at most one fold per pass).
        if !deferred.isEmpty { try foldOwedRows() }
        return try history.prune(
            before: before, excess: excess, batch: batch, throughSequence: foldedSequence)
    }

    /// Files written before keys had one identity may hold one key as several rows, in different
    /// Unicode normal forms: keep the newest version of each under the NFC key, in one commit.
    private func mergeKeyTwins(_ entries: inout [SettingEntry]) throws(SettingsError) {
        guard entries.contains(where: { !KeyIdentity.isNormalized($0.key) }) else { return }
        var winners: [String: SettingEntry] = [:]
        defer { entries = Array(winners.values) }
        var strays: [String] = []
        var affected: Set<String> = []
        for entry in entries {
            let key = KeyIdentity.normalize(entry.key)
            if !key.utf8.elementsEqual(entry.key.utf8) {
                strays.append(entry.key)
                affected.insert(key)
            }
            if let current = winners[key], current.version > entry.version { continue }
            winners[key] = SettingEntry(
                key: key, value: entry.value, version: entry.version, sequence: entry.sequence)
        }
        guard !isReadOnly else { return }
        let delete = try connection.prepare("DELETE FROM entries WHERE key = ?1")
        try connection.transaction { () throws(SettingsError) in
            for key in strays {
                try delete.bind(key, at: 1)
                try delete.run()
            }
            for key in affected { if let entry = winners[key] { try store(entry) } }
        }
    }

    private func store(_ cursor: PeerCursor) throws(SettingsError) {
        try saveCursor.bind(replicaBytes(cursor.peer), at: 1)
        try saveCursor.bind(cursor.record.receivedSequence, at: 2)
        try saveCursor.bind(Int64(clamping: cursor.contactMilliseconds), at: 3)
        if let incarnation = cursor.record.incarnation {
            try saveCursor.bind(ReplicaID(incarnation).bytes, at: 4)
        } else {
            try saveCursor.bindNull(at: 4)
        }
        try saveCursor.run()
    }

    private func loadPeers() throws(SettingsError) -> [ReplicaID: PeerRecord] {
        let select = try connection.prepare("SELECT replica, received_seq, incarnation FROM peers")
        var peers: [ReplicaID: PeerRecord] = [:]
        while try select.step() {
            guard let peer = ReplicaID(bytes: select.bytes(at: 0)) else { continue }
            let incarnation = select.isNull(at: 2) ? nil : ReplicaID(bytes: select.bytes(at: 2))?.uuid
            peers[peer] = PeerRecord(receivedSequence: select.int64(at: 1), incarnation: incarnation)
        }
        return peers
    }

    private static func upsertSQL(values: String) -> String {
        """
        INSERT INTO entries (key, value, hlc, replica, seq) VALUES \(values)
        ON CONFLICT (key) DO UPDATE SET
            value = excluded.value, hlc = excluded.hlc, replica = excluded.replica, seq = excluded.seq
        """
    }

    private func store(_ entry: SettingEntry, encoded: [UInt8]? = nil) throws(SettingsError) {
        try bind(entry, encoded: encoded, to: upsert, from: 0)
        try upsert.run()
    }

    /// Writes the rows of `pending` in order, many to a statement.
    private func store(_ pending: [DeferredEntries.Pending]) throws(SettingsError) {
        try SQLiteConnection.write(rows: pending.count, columns: 5, many: upsertMany, one: upsert) {
            (row, statement, base) throws(SettingsError) in
            try bind(pending[row].entry, encoded: pending[row].encoded, to: statement, from: base)
        }
    }

    /// Binds `entry`'s five columns to parameters `base + 1` to `base + 5` of `statement`.
    private func bind(
        _ entry: SettingEntry, encoded: [UInt8]?, to statement: SQLiteStatement, from base: Int32
    )
        throws(SettingsError)
    {
        try statement.bind(entry.key, at: base + 1)
        if let bytes = encoded ?? entry.value?.encoded() {
            try statement.bind(bytes, at: base + 2)
        } else {
            try statement.bindNull(at: base + 2)
        }
        try statement.bind(Int64(bitPattern: entry.version.timestamp.rawValue), at: base + 3)
        try statement.bind(replicaBytes(entry.version.replica), at: base + 4)
        try statement.bind(entry.sequence, at: base + 5)
    }

    private func storedReplicaID() throws(SettingsError) -> ReplicaID? {
        let select = try connection.prepare("SELECT value FROM meta WHERE name = 'replica_id'")
        guard try select.step() else { return nil }
        guard let id = ReplicaID(bytes: select.bytes(at: 0)) else {
            throw SettingsError(
                .corruptDatabase, "'\(connection.path)' has a malformed replica id", path: connection.path)
        }
        return id
    }

    private func createReplicaID() throws(SettingsError) -> ReplicaID {
        let id = ReplicaID.random()
        let insert = try connection.prepare("INSERT INTO meta (name, value) VALUES ('replica_id', ?1)")
        try insert.bind(id.bytes, at: 1)
        try insert.run()
        return id
    }
}
