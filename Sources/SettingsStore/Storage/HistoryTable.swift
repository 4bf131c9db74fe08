/// The `history` table: one record per change, appended in sequence order and chained per key
/// (`prev_seq`), read newest first, pruned oldest first (`docs/STORAGE.md`).
///
/// Used by its backend only, under the store's writer lock.
final class HistoryTable {
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    /// `insert` for `SQLiteConnection.rowsPerStatement` records at once.
    private let insertMany: SQLiteStatement
    /// One record by sequence number, prepared on first use.
    private var lookup: SQLiteStatement?
    private var replicaBytes = ReplicaBytes()

    package init(connection: SQLiteConnection) throws(SettingsError) {
        self.connection = connection
        insert = try connection.prepare(
            Self.insertSQL(values: SQLiteConnection.valuesList(columns: 14, rows: 1)))
        insertMany = try connection.prepare(Self.insertSQL(values: SQLiteConnection.valuesList(columns: 14)))
    }

    private static func insertSQL(values: String) -> String {
        """
        INSERT INTO history
            (seq, key, value, previous, redacted, hlc, replica, reason, origin, time_ms, uid, pid, exe, prev_seq)
        VALUES \(values)
        """
    }

    /// Appends `link`'s record; `encoded` is its value as already encoded for the entry, if any.
    func append(_ link: ChainedRecord, encoded: [UInt8]?) throws(SettingsError) {
        try bind(link, encoded: encoded, to: insert, from: 0)
        try insert.run()
    }

    /// Appends `links`' records in order, many to a statement; `encoded[i]` is the value of
    /// `links[i]` as already encoded for its entry, if any.
    func append(_ encoded: [[UInt8]?], of links: [ChainedRecord]) throws(SettingsError) {
        try SQLiteConnection.write(rows: links.count, columns: 14, many: insertMany, one: insert) {
            (row, statement, base) throws(SettingsError) in
            try bind(links[row], encoded: encoded[row], to: statement, from: base)
        }
    }

    /// Binds the record's fourteen columns to parameters `base + 1` to `base + 14` of `statement`.
    private func bind(
        _ link: ChainedRecord, encoded: [UInt8]?, to statement: SQLiteStatement, from base: Int32
    )
        throws(SettingsError)
    {
        let change = link.record
        if let previous = link.previousSequence {
            try statement.bind(previous, at: base + 14)
        } else {
            try statement.bindNull(at: base + 14)
        }
        try statement.bind(change.sequence, at: base + 1)
        try statement.bind(change.key, at: base + 2)
        if let bytes = encoded ?? change.value?.encoded() {
            try statement.bind(bytes, at: base + 3)
        } else {
            try statement.bindNull(at: base + 3)
        }
        if let previous = change.previous {
            try statement.bind(previous.encoded(), at: base + 4)
        } else {
            try statement.bindNull(at: base + 4)
        }
        try statement.bind(change.isRedacted ? 1 : 0, at: base + 5)
        try statement.bind(Int64(bitPattern: change.version.timestamp.rawValue), at: base + 6)
        try statement.bind(replicaBytes(change.version.replica), at: base + 7)
        try statement.bind(change.reason, at: base + 8)
        try statement.bind(replicaBytes(change.origin), at: base + 9)
        try statement.bind(Int64(clamping: change.timeMilliseconds), at: base + 10)
        if let actor = change.actor {
            try statement.bind(Int64(actor.uid), at: base + 11)
            try statement.bind(Int64(actor.pid), at: base + 12)
            if let executable = actor.executable {
                try statement.bind(executable, at: base + 13)
            } else {
                try statement.bindNull(at: base + 13)
            }
        } else {
            try statement.bindNull(at: base + 11)
            try statement.bindNull(at: base + 12)
            try statement.bindNull(at: base + 13)
        }
    }

    /// The records `query`'s times select, newest first, at most its limit.
    func recent(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
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

    /// The records numbered after `sequence`, oldest first, at most `limit`.
    func records(after sequence: Int64, limit: Int) throws(SettingsError) -> [HistoryRecord] {
        let select = try connection.prepare(
            "SELECT \(Self.recordColumns) FROM history WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        try select.bind(sequence, at: 1)
        try select.bind(Int64(clamping: limit), at: 2)
        var records: [HistoryRecord] = []
        while try select.step() {
            if let link = Self.chainedRecord(from: select) { records.append(link.record) }
        }
        return records
    }

    /// The record numbered `sequence`, if the table holds it.
    func record(at sequence: Int64) throws(SettingsError) -> ChainedRecord? {
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
        let decode = { (column: Int32) -> SettingValue? in try? select.storedValue(at: column) }
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

    /// How many records there are.
    func count() throws(SettingsError) -> Int {
        Int(try connection.scalar("SELECT count(*) FROM history") ?? 0)
    }

    /// The time of the oldest record kept, in milliseconds since 1970.
    func oldestTime() throws(SettingsError) -> UInt64? {
        try connection.scalar("SELECT time_ms FROM history ORDER BY seq LIMIT 1").map { UInt64(clamping: $0) }
    }

    /// Deletes the oldest records up to `folded` (see `SettingsBackend.pruneHistory`); returns
    /// how many it deleted.
    func prune(before: UInt64, excess: Int, batch: Int, throughSequence folded: Int64) throws(SettingsError)
        -> Int
    {
        // Only the oldest `batch` records are ever looked at, so a batch costs the same at a
        // thousand records as at a million (times follow sequence numbers, near enough). A
        // record whose row is still owed (`DeferredEntries`) is never among them.
        let prune =
            excess > 0
            ? try connection.prepare(
                "DELETE FROM history WHERE seq IN (SELECT seq FROM history WHERE seq <= ?3 ORDER BY seq LIMIT ?2)"
            )
            : try connection.prepare(
                """
                DELETE FROM history WHERE seq IN (
                    SELECT seq FROM (SELECT seq, time_ms FROM history WHERE seq <= ?3 ORDER BY seq LIMIT ?2)
                    WHERE time_ms < ?1)
                """)
        if excess == 0 { try prune.bind(Int64(clamping: before), at: 1) }
        try prune.bind(Int64(excess > 0 ? min(batch, excess) : batch), at: 2)
        try prune.bind(folded, at: 3)
        try prune.run()
        return Int(try connection.scalar("SELECT changes()") ?? 0)
    }

    /// The entries the records after `sequence` hold: each key's newest, unless that record is
    /// redacted (a `secret` key's row is written with its record); and the last record's number.
    package func entries(after sequence: Int64) throws(SettingsError) -> (
        entries: [String: SettingEntry], last: Int64?
    ) {
        let select = try connection.prepare(
            "SELECT seq, key, value, redacted, hlc, replica FROM history WHERE seq > ?1 ORDER BY seq")
        try select.bind(sequence, at: 1)
        var newest: [String: SettingEntry?] = [:]
        var last: Int64?
        while try select.step() {
            last = select.int64(at: 0)
            let key = select.string(at: 1)
            guard select.int64(at: 3) == 0 else {
                newest[key] = .some(nil)
                continue
            }
            let value: SettingValue?
            do throws(SettingsError) {
                value = try select.storedValue(at: 2)
            } catch {
                throw SettingsError(
                    .corruptDatabase,
                    "'\(connection.path)': history record \(select.int64(at: 0)): \(error.message)",
                    key: key, path: connection.path)
            }
            guard let replica = ReplicaID(bytes: select.bytes(at: 5)) else {
                throw SettingsError(
                    .corruptDatabase,
                    "'\(connection.path)': bad replica id in history record \(select.int64(at: 0))",
                    key: key, path: connection.path)
            }
            let version = SettingVersion(
                timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: select.int64(at: 4))),
                replica: replica)
            newest[key] = SettingEntry(
                key: key, value: value, version: version, sequence: select.int64(at: 0))
        }
        return (newest.compactMapValues { $0 }, last)
    }
}
