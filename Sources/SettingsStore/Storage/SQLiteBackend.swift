/// The durable backend: one SQLite database in WAL mode, with prepared statements reused for
/// every commit.
final class SQLiteBackend: SettingsBackend {
    private let connection: SQLiteConnection
    private let upsert: SQLiteStatement
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let saveCursor: SQLiteStatement
    private let record: SQLiteStatement
    /// One record by sequence number, prepared on first use.
    private var lookup: SQLiteStatement?
    private var lastReplica: (id: ReplicaID, bytes: [UInt8])?
    private let isReadOnly: Bool

    /// The file has been checked (`DatabaseHeader`) before this opens it for writing.
    convenience init(path: String, durability: Durability) throws(SettingsError) {
        let connection = try SQLiteConnection(path: path)
        // The first statement reads the header, so a damaged file fails right here, unchanged.
        try Schema.migrator.check(connection)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        // Checkpoint (and so fsync the database) every ~16 MiB of WAL rather than every 4 MiB: a
        // commit that also appends history touches more pages, and checkpoints are what cost.
        try connection.execute("PRAGMA wal_autocheckpoint = 4000")
        try Schema.migrator.migrate(connection)
        try self.init(connection: connection, isReadOnly: false)
    }

    /// Opens `path` for reading only; when the folder does not let this user create the WAL's
    /// shared-memory file, the file is read as immutable (a consistent image of its last commit).
    convenience init(readingPath path: String) throws(SettingsError) {
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
        upsert = try connection.prepare(
            """
            INSERT INTO entries (key, value, hlc, replica, seq) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (key) DO UPDATE SET
                value = excluded.value, hlc = excluded.hlc, replica = excluded.replica, seq = excluded.seq
            """)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        saveCursor = try connection.prepare(
            """
            INSERT INTO peers (replica, received_seq, last_contact_ms, incarnation) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (replica) DO UPDATE SET
                received_seq = excluded.received_seq, last_contact_ms = excluded.last_contact_ms,
                incarnation = excluded.incarnation
            """)
        record = try connection.prepare(
            """
            INSERT INTO history
                (seq, key, value, previous, redacted, hlc, replica, reason, origin, time_ms, uid, pid, exe,
                 prev_seq)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """)
    }

    func load() throws(SettingsError) -> LoadedReplica {
        // Everything is read before anything is written: a damaged file fails here untouched.
        let existingID = try storedReplicaID()
        let scan = try connection.prepare("SELECT key, value, hlc, replica, seq FROM entries")
        var entries: [SettingEntry] = []
        if let count = try connection.scalar("SELECT count(*) FROM entries") {
            entries.reserveCapacity(Int(count))
        }
        var lastReplica = existingID ?? ReplicaID.random()
        while try scan.step() {
            let key = scan.string(at: 0)
            let value: SettingValue?
            do throws(SettingsError) {
                value =
                    scan.isNull(at: 1)
                    ? nil
                    : try scan.withBytes(at: 1) { (bytes) throws(SettingsError) in
                        try SettingValue(decoding: bytes)
                    }
            } catch {
                throw SettingsError(
                    .corruptDatabase, "'\(connection.path)': \(error.message)", key: key,
                    path: connection.path)
            }
            // Most rows come from a handful of replicas: reuse the last decoded id when bytes match.
            let replica = try scan.withBytes(at: 3) { (bytes) throws(SettingsError) -> ReplicaID in
                if bytes.elementsEqual(lastReplica.bytes) { return lastReplica }
                guard let decoded = ReplicaID(bytes: bytes) else {
                    throw SettingsError(
                        .corruptDatabase, "'\(connection.path)': bad replica id for '\(key)'",
                        key: key, path: connection.path)
                }
                return decoded
            }
            lastReplica = replica
            let version = SettingVersion(
                timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: scan.int64(at: 2))),
                replica: replica)
            entries.append(
                SettingEntry(key: key, value: value, version: version, sequence: scan.int64(at: 4)))
        }
        try mergeKeyTwins(&entries)
        let peers = try loadPeers()
        let replicaID: ReplicaID
        if let existingID {
            replicaID = existingID
        } else if isReadOnly {
            replicaID = lastReplica
        } else {
            replicaID = try createReplicaID()
        }
        let lineage = try beginIncarnation(at: entries.reduce(0) { max($0, $1.sequence) })
        let horizon = try connection.scalar("SELECT value FROM meta WHERE name = 'tombstone_horizon'") ?? 0
        return LoadedReplica(
            replicaID: replicaID, entries: entries, peers: peers, lineage: lineage,
            tombstoneHorizon: HybridTimestamp(rawValue: UInt64(bitPattern: horizon)),
            historyCount: try historyCount())
    }

    func collectTombstones(below cutoff: HybridTimestamp, horizon: HybridTimestamp) throws(SettingsError) {
        let delete = try connection.prepare("DELETE FROM entries WHERE value IS NULL AND hlc < ?1")
        let record = try connection.prepare(
            "INSERT OR REPLACE INTO meta (name, value) VALUES ('tombstone_horizon', ?1)")
        try connection.transaction { () throws(SettingsError) in
            try delete.bind(Int64(bitPattern: cutoff.rawValue), at: 1)
            try delete.run()
            try record.bind(Int64(bitPattern: horizon.rawValue), at: 1)
            try record.run()
        }
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
        try connection.transaction { () throws(SettingsError) in
            try insert(next)
            try connection.execute(
                "DELETE FROM incarnations WHERE ordinal <= (SELECT max(ordinal) FROM incarnations) - \(Lineage.limit)"
            )
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
    }

    private func store(_ lineage: Lineage, replacing: Bool) throws(SettingsError) {
        if replacing { try connection.execute("DELETE FROM incarnations") }
        for incarnation in lineage.incarnations { try insert(incarnation) }
    }

    private func insert(_ incarnation: Incarnation) throws(SettingsError) {
        let insert = try connection.prepare(
            "INSERT INTO incarnations (id, start_seq, opened_ms) VALUES (?1, ?2, ?3)")
        try insert.bind(ReplicaID(incarnation.id).bytes, at: 1)
        try insert.bind(incarnation.startSequence, at: 2)
        try insert.bind(Int64(clamping: SettingsConfiguration.systemClock()), at: 3)
        try insert.run()
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?, history: [ChainedRecord]) throws(SettingsError)
    {
        guard !isReadOnly else {
            throw SettingsError(
                .readOnly, "'\(connection.path)' is open for reading only", path: connection.path)
        }
        guard entries.count + history.count + (cursor == nil ? 0 : 1) > 1 else {
            // A single statement commits on its own: no explicit transaction to pay for.
            if let entry = entries.first { try store(entry) }
            if let cursor { try store(cursor) }
            return
        }
        try begin.run()
        do {
            // Each value is encoded once, for its entry and its history record alike (the
            // records, when there are any, follow the entries one for one).
            let recorded = history.count == entries.count
            var encoded: [[UInt8]?] = []
            if recorded { encoded.reserveCapacity(entries.count) }
            for entry in entries {
                let bytes = entry.value?.encoded()
                if recorded { encoded.append(bytes) }
                try store(entry, encoded: bytes)
            }
            if let cursor { try store(cursor) }
            for (index, link) in history.enumerated() {
                let change = link.record
                let reusable = recorded && !change.isRedacted && entries[index].sequence == change.sequence
                try store(link, encoded: reusable ? encoded[index] : change.value?.encoded())
            }
            try commit.run()
        } catch {
            if connection.isInTransaction {
                try? connection.execute("ROLLBACK")  // The original error is the one worth reporting.
            }
            throw error
        }
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

    private func store(_ link: ChainedRecord, encoded: [UInt8]?) throws(SettingsError) {
        let change = link.record
        if let previous = link.previousSequence {
            try record.bind(previous, at: 14)
        } else {
            try record.bindNull(at: 14)
        }
        try record.bind(change.sequence, at: 1)
        try record.bind(change.key, at: 2)
        if let bytes = encoded ?? change.value?.encoded() {
            try record.bind(bytes, at: 3)
        } else {
            try record.bindNull(at: 3)
        }
        if let previous = change.previous {
            try record.bind(previous.encoded(), at: 4)
        } else {
            try record.bindNull(at: 4)
        }
        try record.bind(change.isRedacted ? 1 : 0, at: 5)
        try record.bind(Int64(bitPattern: change.version.timestamp.rawValue), at: 6)
        try record.bind(replicaBytes(change.version.replica), at: 7)
        try record.bind(change.reason, at: 8)
        try record.bind(replicaBytes(change.origin), at: 9)
        try record.bind(Int64(clamping: change.timeMilliseconds), at: 10)
        if let actor = change.actor {
            try record.bind(Int64(actor.uid), at: 11)
            try record.bind(Int64(actor.pid), at: 12)
            if let executable = actor.executable {
                try record.bind(executable, at: 13)
            } else {
                try record.bindNull(at: 13)
            }
        } else {
            try record.bindNull(at: 11)
            try record.bindNull(at: 12)
            try record.bindNull(at: 13)
        }
        try record.run()
    }

    func recentHistory(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        var conditions: [String] = []
        if query.sinceMilliseconds != nil { conditions.append("time_ms >= ?1") }
        if query.untilMilliseconds != nil { conditions.append("time_ms <= ?2") }
        let select = try connection.prepare(
            """
            SELECT \(Self.recordColumns) FROM history
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY seq DESC LIMIT ?3
            """)
        if let since = query.sinceMilliseconds { try select.bind(Int64(clamping: since), at: 1) }
        if let until = query.untilMilliseconds { try select.bind(Int64(clamping: until), at: 2) }
        try select.bind(Int64(query.limit), at: 3)
        var records: [HistoryRecord] = []
        while try select.step() {
            if let link = Self.chainedRecord(from: select) { records.append(link.record) }
        }
        return records
    }

    func chainedRecord(at sequence: Int64) throws(SettingsError) -> ChainedRecord? {
        if lookup == nil {
            lookup = try connection.prepare("SELECT \(Self.recordColumns) FROM history WHERE seq = ?1")
        }
        guard let lookup else { return nil }
        try lookup.bind(sequence, at: 1)
        defer { lookup.reset() }
        guard try lookup.step() else { return nil }
        return Self.chainedRecord(from: lookup)
    }

    private static let recordColumns =
        "seq, key, value, previous, redacted, hlc, replica, reason, origin, time_ms, uid, pid, exe, prev_seq"

    /// The record in the current row of a statement selecting `recordColumns`; nil when its
    /// replica ids are malformed.
    private static func chainedRecord(from select: SQLiteStatement) -> ChainedRecord? {
        let decode = { (column: Int32) -> SettingValue? in
            guard !select.isNull(at: column) else { return nil }
            return try? select.withBytes(at: column) { (bytes) throws(SettingsError) in
                try SettingValue(decoding: bytes)
            }
        }
        guard let replica = ReplicaID(bytes: select.bytes(at: 6)),
            let origin = ReplicaID(bytes: select.bytes(at: 8))
        else { return nil }
        let actor =
            select.isNull(at: 10)
            ? nil
            : ChangeActor(
                uid: UInt32(truncatingIfNeeded: select.int64(at: 10)),
                pid: Int32(truncatingIfNeeded: select.int64(at: 11)),
                executable: select.isNull(at: 12) ? nil : select.string(at: 12))
        let record = HistoryRecord(
            key: select.string(at: 1), value: decode(2), previous: decode(3),
            isRedacted: select.int64(at: 4) == 1,
            version: SettingVersion(
                timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: select.int64(at: 5))),
                replica: replica),
            sequence: select.int64(at: 0), reason: select.string(at: 7), origin: origin,
            timeMilliseconds: UInt64(clamping: select.int64(at: 9)), actor: actor)
        return ChainedRecord(
            record: record, previousSequence: select.isNull(at: 13) ? nil : select.int64(at: 13))
    }

    func historyCount() throws(SettingsError) -> Int {
        Int(try connection.scalar("SELECT count(*) FROM history") ?? 0)
    }

    func pruneHistory(before: UInt64, excess: Int, batch: Int) throws(SettingsError) -> Int {
        // Only the oldest `batch` records are ever looked at, so a batch costs the same at a
        // thousand records as at a million (times follow sequence numbers, near enough).
        let prune =
            excess > 0
            ? try connection.prepare(
                "DELETE FROM history WHERE seq IN (SELECT seq FROM history ORDER BY seq LIMIT ?2)")
            : try connection.prepare(
                """
                DELETE FROM history WHERE seq IN (
                    SELECT seq FROM (SELECT seq, time_ms FROM history ORDER BY seq LIMIT ?2) WHERE time_ms < ?1)
                """)
        if excess == 0 { try prune.bind(Int64(clamping: before), at: 1) }
        try prune.bind(Int64(excess > 0 ? min(batch, excess) : batch), at: 2)
        try prune.run()
        return Int(try connection.scalar("SELECT changes()") ?? 0)
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

    private func store(_ entry: SettingEntry, encoded: [UInt8]? = nil) throws(SettingsError) {
        try upsert.bind(entry.key, at: 1)
        if let bytes = encoded ?? entry.value?.encoded() {
            try upsert.bind(bytes, at: 2)
        } else {
            try upsert.bindNull(at: 2)
        }
        try upsert.bind(Int64(bitPattern: entry.version.timestamp.rawValue), at: 3)
        try upsert.bind(replicaBytes(entry.version.replica), at: 4)
        try upsert.bind(entry.sequence, at: 5)
        try upsert.run()
    }

    /// The stored form of a replica id, cached because most writes come from one replica.
    private func replicaBytes(_ replica: ReplicaID) -> [UInt8] {
        if let lastReplica, lastReplica.id == replica { return lastReplica.bytes }
        let bytes = replica.bytes
        lastReplica = (replica, bytes)
        return bytes
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
