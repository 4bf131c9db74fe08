package import SettingsStore
import SettingsWire

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// One namespace of a hub, on an open connection: the statements of hub sync, all
/// parameterised. Row-level security decides what the connecting role may see.
package struct HubNamespace {
    package let connection: PostgresConnection
    /// The role name the entries belong to.
    let name: String
    /// The replica id this replica keeps its hub cursor under: one per hub and namespace.
    package let peerID: ReplicaID
    /// The notification channel: named after the namespace's secret, which only its members can
    /// read, so nobody else can listen to it (or learn when it changes).
    let channel: String
    /// `lastSequence()`'s statement with the namespace quoted in, for the simple query protocol.
    let pollStatement: String

    /// What this connection last read or wrote of each replica's pushed position.
    private let ledger = PushLedger()
    private let refusalLedger = RefusalLedger()

    /// Seals what is pushed and opens what is pulled, when the namespace is sealed (set once the
    /// link decided, `Sealing`); every push and pull names its key, and the hub refuses them
    /// when the namespace is sealed otherwise.
    package var sealer: EntrySealer?

    /// The key id pushes and pulls name: the sealer's, NULL when plain.
    private var sealedUnder: PostgresValue { sealer.map { .text($0.key.id) } ?? .null }

    /// Entries per push or pull statement.
    package static let batchEntries = 1_000
    /// Bytes of values in one pull, about (a larger single value still comes alone).
    package static let batchBytes = 8 << 20

    /// Opens `namespace` (the login role when nil): checks the role may use it, makes sure
    /// its counter row exists, and, when `listens`, listens for its notifications (not through a
    /// pooler in transaction pooling: the session that listened is soon another client's).
    package init(connection: PostgresConnection, namespace: String?, listens: Bool = true)
        throws(SettingsError)
    {
        self.connection = connection
        // The login role, never `current_user`: a pooler in transaction pooling can hand this
        // client a server connection on which another client ran `SET ROLE` and never reset it.
        let roles = try connection.execute("SELECT session_user::text, current_user::text")
        let login = roles.text(0, 0)
        guard roles.text(0, 1) == login else {
            throw SettingsError(
                .accessDenied,
                "the hub connection runs as role '\(roles.text(0, 1))', not its login role '\(login)' (a SET ROLE left on a pooled server connection?): refusing to sync through it"
            )
        }
        let name = namespace ?? login
        let visible = try connection.execute("SELECT settingsd.visible($1)::int::bigint", [.text(name)])
        guard visible.count == 1, visible.int64(0, 0) == 1 else {
            throw SettingsError(
                .accessDenied,
                "role '\(login)' may not use hub namespace '\(name)' (it must be a member of the role so named)"
            )
        }
        self.name = name
        let hub = try connection.execute("SELECT value FROM settingsd.meta WHERE name = 'hub_id'").text(0, 0)
        peerID = Self.peerID(hub: hub, namespace: name)
        // Makes sure the counter and the channel exist (users may not write the tables themselves).
        let secret = try connection.execute("SELECT settingsd.join($1)", [.text(name)])
        // The secret is hub input like any other: it must be what hub init makes.
        guard secret.count == 1, !secret.isNull(0, 0), Self.isChannelSecret(secret.text(0, 0)) else {
            throw SettingsError(
                .protocolError, "the hub's notification channel for '\(name)' is missing or malformed")
        }
        channel = "settingsd_" + secret.text(0, 0)
        pollStatement = "SELECT settingsd.counter(\(try connection.quotedLiteral(name)))"
        if listens { try connection.execute("LISTEN \(try connection.quotedIdentifier(channel))") }
    }

    /// Whether `text` is a channel secret as the schema makes them: 32 hexadecimal digits.
    private static func isChannelSecret(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// How far `replica` pushed to this namespace (0: never) and the incarnation it pushed under
    /// (nil: never). The next push of `replica` on this namespace expects to
    /// find exactly this record, and fails if another session changed it meanwhile.
    package func pushedRecord(of replica: ReplicaID) throws(SettingsError) -> PushedRecord {
        let rows = try connection.execute(
            "SELECT pushed_seq, incarnation FROM settingsd.replicas WHERE namespace = $1 AND replica = $2",
            [.text(name), .bytes(replica.bytes)])
        var record = PushedRecord(sequence: 0, incarnation: nil, isRegistered: rows.count == 1)
        if rows.count == 1 {
            record.sequence = try Arrival.position(rows.int64(0, 0), "the hub's pushed position")
            // A malformed incarnation is no incarnation this replica ever had: a fork.
            record.incarnation = rows.isNull(0, 1) ? nil : ReplicaID(bytes: rows.bytes(0, 1))?.uuid ?? UUID()
        }
        ledger.records[replica] = record
        return record
    }

    /// Whether the position this connection last read or wrote for `replica` is more than `slack`
    /// numbers behind `position` (true when it knows none, or the hub holds none).
    func recordLags(_ replica: ReplicaID, behind position: Int64, by slack: Int64 = 0) -> Bool {
        guard let record = ledger.records[replica], record.isRegistered else { return true }
        return position - record.sequence > slack
    }

    /// The entries after hub sequence `cursor`, in hub order (each entry's `sequence` is its hub
    /// sequence number), at most `limit` and about `byteBudget` bytes of values (always at least
    /// one), each with whether `replica` pushed it itself (this replica normally holds those;
    /// when it does not hold that exact version, because another copy of its file pushed it or
    /// the row was forged, the caller fetches the row with `entries(forKeys:)`).
    ///
    /// The batch is one that every machine at this cursor shares (`settingsd.pull_batch`,
    /// packed once and kept while the counter stands), so it carries the values of this
    /// replica's own rows too, and counts them in the budget.
    ///
    /// Rows are hostile input: a key or value far over `limits` (`caps(for:)`) is refused inside
    /// PostgreSQL and never fetched, a hub sequence number out of range is never computed with,
    /// and a value this build cannot read is skipped; all of them are counted in `unreadable`.
    /// `complete` says the batch held every row after the cursor (then `through` is at least the
    /// counter as the statement saw it): no need to pull again. A batch this build cannot read
    /// (a kept one damaged by hand, or a newer layout) throws `protocolError` with where it broke.
    package func pull(
        after cursor: Int64, for replica: ReplicaID, limits: SettingsLimits,
        limit: Int = batchEntries, byteBudget: Int = batchBytes
    ) throws(SettingsError) -> PulledBatch {
        let caps = caps(for: limits)
        // A window of hub sequence numbers bounds the work whatever plan PostgreSQL picks: on a
        // table its statistics think small (a new hub, a burst of pushes since the last ANALYZE)
        // it would read every row after the cursor and sort them, which made an initial sync
        // quadratic. Numbers no row holds now only make a window come back short; the window
        // that reaches the counter has no end.
        let window = Int64(limit) * 2
        let rows: PostgresRows
        do {
            rows = try connection.execute(
                "SELECT * FROM settingsd.pull_batch($1, $2, $3, $4, $5, $6, $7, $8)",
                [
                    .text(name), sealedUnder, .int64(cursor), .int64(Int64(limit)),
                    .int64(Int64(caps.keyBytes)),
                    .int64(Int64(caps.valueBytes)), .int64(Int64(byteBudget)), .int64(window),
                ])
        } catch  where error.message.contains("[SQLSTATE \(HubSchema.sealChangedState)]") {
            throw Self.sealChanged(error)
        }
        do throws(PackedBatch.Malformed) {
            return try Self.batch(
                packedIn: rows, after: cursor, for: replica, window: window, limit: limit, sealer: sealer)
        } catch {
            throw SettingsError(
                .protocolError,
                "the hub's batch for '\(name)' after \(cursor) is malformed at byte \(error.offset) (\(error.reason))"
            )
        }
    }

    /// The batch in `settingsd.pull_batch`'s rows: the counter and the candidate
    /// count on each, and the parts of one packed value in order; no rows when the namespace
    /// has no counter row. The caller's own rows are told by their pusher.
    private static func batch(
        packedIn rows: PostgresRows, after cursor: Int64, for replica: ReplicaID, window: Int64, limit: Int,
        sealer: EntrySealer?
    ) throws(PackedBatch.Malformed) -> PulledBatch {
        guard rows.count > 0 else { return PulledBatch(through: cursor, counter: nil) }
        let counter = rows.int64(0, 0)
        var batch = PulledBatch(through: cursor, counter: Arrival.isPosition(counter) ? counter : nil)
        var packed: [UInt8] = []
        packed.reserveCapacity((0..<rows.count).reduce(0) { $0 + rows.withBytes($1, 2) { $0.count } })
        for row in 0..<rows.count { rows.withBytes(row, 2) { packed.append(contentsOf: $0) } }
        var returned: Int64 = 0
        var refusals = SealRefusals()
        defer { batch.refusals = refusals }
        let me = replica.bytes
        // `withUnsafeBytes` rethrows untyped errors: the refusal comes out as a value.
        let failure = packed.withUnsafeBytes { bytes -> PackedBatch.Malformed? in
            do throws(PackedBatch.Malformed) {
                try PackedBatch.forEach(in: bytes) { row in
                    returned += 1
                    let version = ReplicaID(bytes: row.writer).map {
                        SettingVersion(
                            timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: row.stamp)), replica: $0)
                    }
                    let opened: (SettingVersion, Int64) -> SettingEntry? = { version, sequence in
                        guard let key = row.key else { return nil }
                        return Self.entry(
                            key: String(decoding: key, as: UTF8.self), value: row.value, version: version,
                            sequence: sequence, sealer: sealer, refusals: &refusals)
                    }
                    batch.take(
                        sequence: row.sequence, isReadable: !row.isOversize, version: version,
                        isMine: row.pusher.elementsEqual(me),
                        key: { version in
                            guard sealer != nil else {
                                return row.key.map { String(decoding: $0, as: UTF8.self) }
                            }
                            return opened(version, 0)?.key
                        },
                        entry: opened)
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        batch.finish(
            after: cursor, window: window, limit: limit, returned: returned, candidates: rows.int64(0, 1),
            counter: counter)
        return batch
    }

    /// Pushes `entries` (each key once) and records that `replica` has pushed through its local
    /// sequence number `through`, in one statement: one transaction, which takes the namespace's
    /// next hub sequence numbers under the counter row's lock, keeps per key the higher version
    /// (decided inside PostgreSQL), and notifies listeners once it commits.
    ///
    /// - Returns: The hub sequence numbers the batch took (each entry one, whether or not it
    ///   replaced the hub's); nil for an empty batch.
    ///
    /// The push records `incarnation` with the position. When `pushedRecord(of:)` read the
    /// replica's record on this connection, the push expects it (or what the last push here
    /// wrote) and fails with `replicaForked` when it changed: another copy of the replica pushed.
    @discardableResult
    package func push(
        _ entries: [SettingEntry], from replica: ReplicaID, through: Int64, incarnation: UUID? = nil
    )
        throws(SettingsError)
        -> ClosedRange<Int64>?
    {
        let expected = ledger.records[replica]
        var keys: [String] = []
        var values: [[UInt8]?] = []
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        for entry in entries {
            if let sealer {
                let sealed = sealer.seal(entry)
                keys.append(sealed.keyID)
                values.append(sealed.sealed)
            } else {
                keys.append(entry.key)
                values.append(entry.value?.encoded())
            }
        }
        // The batch travels as four arrays, so the statement's text never changes with its size;
        // `settingsd.push` does the rest inside PostgreSQL.
        let result: PostgresRows
        do {
            result = try connection.execute(
                "SELECT settingsd.push($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                [
                    .text(name), sealedUnder, .bytes(replica.bytes), .int64(through), .textArray(keys),
                    .bytesArray(values),
                    .int64Array(entries.map { Int64(bitPattern: $0.version.timestamp.rawValue) }),
                    .bytesArray(entries.map { $0.version.replica.bytes }),
                    incarnation.map { .bytes(ReplicaID($0).bytes) } ?? .null,
                    expected.map { .int64($0.sequence) } ?? .null,
                    expected?.incarnation.map { .bytes(ReplicaID($0).bytes) } ?? .null,
                ])
        } catch  where error.message.contains("[SQLSTATE \(HubSchema.positionMovedState)]") {
            // Another copy of the replica pushed meanwhile, or the hub's record changed.
            throw SettingsError(.replicaForked, error.message, sql: error.sql)
        } catch  where error.message.contains("[SQLSTATE \(HubSchema.sealChangedState)]") {
            throw Self.sealChanged(error)
        }
        guard entries.isEmpty || (result.count == 1 && !result.isNull(0, 0)) else {
            throw SettingsError(.io, "the hub did not number a push to namespace '\(name)'")
        }
        // Recorded by the push, in the transaction that numbered it.
        if expected != nil {
            ledger.records[replica] = PushedRecord(sequence: through, incarnation: incarnation)
        }
        guard !entries.isEmpty else { return nil }
        let base = try Arrival.position(result.int64(0, 0), "the hub's counter for '\(name)'")
        return (base + 1)...(base + Int64(entries.count))
    }

    /// Tells the namespace's listeners that something changed (`settingsd.notify`), after a
    /// push committed.
    func notifyListeners() throws(SettingsError) {
        try connection.execute("SELECT settingsd.notify($1)", [.text(name)])
    }

    /// The namespace's digest: the sum, modulo 2^64, of its rows' fingerprints (PostgreSQL's
    /// generated column), and how many rows it holds (`settingsd.digest`).
    package func digest() throws(SettingsError) -> (sum: UInt64, rows: Int64) {
        let rows = try connection.execute("SELECT * FROM settingsd.digest($1)", [.text(name)])
        guard rows.count == 1 else {
            throw SettingsError(.protocolError, "the hub's digest of '\(name)' is malformed")
        }
        return (Self.sum(rows, row: 0, from: 0), rows.int64(0, 3))
    }

    /// The sums of the namespace's non-empty buckets (the fingerprint's top 12 bits).
    package func bucketSums() throws(SettingsError) -> [Int: UInt64] {
        let rows = try connection.execute("SELECT * FROM settingsd.bucket_sums($1)", [.text(name)])
        var sums: [Int: UInt64] = [:]
        for row in 0..<rows.count { sums[Int(rows.int64(row, 0))] = Self.sum(rows, row: row, from: 1) }
        return sums
    }

    /// The fingerprint sum from `HubSchema.partialSums` in three columns of `row` from `column` on.
    private static func sum(_ rows: PostgresRows, row: Int, from column: Int) -> UInt64 {
        let high = UInt64(bitPattern: rows.int64(row, column))
        let middle = UInt64(bitPattern: rows.int64(row, column + 1))
        let low = UInt64(bitPattern: rows.int64(row, column + 2))
        return (high &<< 32) &+ (middle &<< 16) &+ low
    }

    /// Every row of the namespace in `buckets`, whoever pushed it, with its fingerprint (each
    /// entry's `sequence` is its hub sequence number); rows
    /// this build cannot read (oversize, malformed, a hub sequence number out of range) come
    /// as their fingerprints only, in `unreadable` (an oversize one is never fetched).
    func entries(inBuckets buckets: [Int], limits: SettingsLimits)
        throws(SettingsError) -> (entries: [(entry: SettingEntry, fingerprint: UInt64)], unreadable: [UInt64])
    {
        try rows(
            where: "((fp >> 52) & 4095) = ANY($2::bigint[])", .int64Array(buckets.map(Int64.init)),
            limits: limits)
    }

    /// Every row of the namespace, as `entries(inBuckets:)` reads them.
    func allEntries(limits: SettingsLimits)
        throws(SettingsError) -> (entries: [(entry: SettingEntry, fingerprint: UInt64)], unreadable: [UInt64])
    {
        try rows(where: "hub_seq >= $2::bigint", .int64(Int64.min), limits: limits)
    }

    /// The namespace's rows of `keys`, as `entries(inBuckets:)` reads them.
    func entries(forKeys keys: [String], limits: SettingsLimits)
        throws(SettingsError) -> (entries: [(entry: SettingEntry, fingerprint: UInt64)], unreadable: [UInt64])
    {
        try rows(
            where: "key = ANY($2::text[])",
            .textArray(sealer.map { sealer in keys.map(sealer.keyID(for:)) } ?? keys),
            limits: limits)
    }

    private func rows(
        where condition: String, _ selector: PostgresValue, limits: SettingsLimits
    ) throws(SettingsError) -> (entries: [(entry: SettingEntry, fingerprint: UInt64)], unreadable: [UInt64]) {
        let caps = caps(for: limits)
        // Nothing comes back when the namespace is sealed otherwise than this link seals: its
        // rows are never read as this link's.
        let rows = try connection.execute(
            """
            SELECT CASE WHEN readable THEN key END, CASE WHEN readable THEN value END, hlc, replica,
                readable::int::bigint, fp, CASE WHEN readable THEN hub_seq ELSE 0 END
            FROM (SELECT key, value, hlc, replica, fp, hub_seq,
                    octet_length(key) <= $3::bigint AND coalesce(octet_length(value), 0) <= $4::bigint
                        AND hub_seq BETWEEN 0 AND 4611686018427387904 AS readable
                FROM settingsd.entries
                WHERE namespace = $1 AND \(condition)
                    AND (SELECT s.key_id FROM settingsd.seals AS s WHERE s.namespace = $1) IS NOT DISTINCT FROM $5::text
                ) AS rows
            """,
            [
                .text(name), selector, .int64(Int64(caps.keyBytes)), .int64(Int64(caps.valueBytes)),
                sealedUnder,
            ])
        var entries: [(entry: SettingEntry, fingerprint: UInt64)] = []
        var unreadable: [UInt64] = []
        var refusals = SealRefusals()
        for row in 0..<rows.count {
            let fingerprint = UInt64(bitPattern: rows.int64(row, 5))
            guard rows.int64(row, 4) == 1, let version = Self.version(rows, row),
                let entry = rows.withBytes(
                    row, 1,
                    { bytes in
                        Self.entry(
                            key: rows.text(row, 0), value: rows.isNull(row, 1) ? nil : bytes,
                            version: version,
                            sequence: rows.int64(row, 6), sealer: sealer, refusals: &refusals)
                    })
            else {
                unreadable.append(fingerprint)
                continue
            }
            entries.append((entry, fingerprint))
        }
        refusalLedger.refusals.take(refusals)
        return (entries, unreadable)
    }

    /// The largest key and value a store with `limits` fetches from the hub; PostgreSQL leaves
    /// larger ones unfetched. The hub holds the binary encoding, which may take more than a
    /// value's counted size: what is far over is refused here, `applyRemote` checks the exact limit.
    static func caps(for limits: SettingsLimits) -> (keyBytes: Int, valueBytes: Int) {
        (Arrival.keyCap(forLimit: limits.maximumKeyBytes), 2 * limits.maximumValueBytes + 1024)
    }

    /// `caps(for:)` for this namespace: a sealed row's key is a key id, and its value carries
    /// the key name and the seal besides.
    func caps(for limits: SettingsLimits) -> (keyBytes: Int, valueBytes: Int) {
        let plain = Self.caps(for: limits)
        guard sealer != nil else { return plain }
        return (max(plain.keyBytes, 32), plain.valueBytes + plain.keyBytes + EntrySealer.overhead)
    }

    /// The version in columns 2 (stamp) and 3 (replica) of `row`, nil for a malformed replica id.
    private static func version(_ rows: PostgresRows, _ row: Int) -> SettingVersion? {
        guard let replica = rows.withBytes(row, 3, { ReplicaID(bytes: $0) }) else { return nil }
        return SettingVersion(
            timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: rows.int64(row, 2))), replica: replica)
    }

    /// The entry of a row: `key` and the value's bytes (nil: a tombstone), opened by `sealer`
    /// when the namespace is sealed; nil for a value this build cannot read, or a sealed row
    /// refused (noted in `refusals`). Both pull statements' rows come through here.
    private static func entry(
        key: String, value: UnsafeRawBufferPointer?, version: SettingVersion, sequence: Int64,
        sealer: EntrySealer?, refusals: inout SealRefusals
    ) -> SettingEntry? {
        if let sealer {
            guard let value else {
                refusals.note(.malformed("a tombstone in the clear"), key: key, version: version)
                return nil
            }
            switch sealer.open(keyID: key, sealed: value, version: version, sequence: sequence) {
            case .success(let entry): return entry
            case .failure(let refusal):
                refusals.note(refusal, key: key, version: version)
                return nil
            }
        }
        guard let value else {
            return SettingEntry(key: key, value: nil, version: version, sequence: sequence)
        }
        guard let decoded = try? SettingValue(decoding: value) else { return nil }
        return SettingEntry(key: key, value: decoded, version: version, sequence: sequence)
    }

    /// The statement failed because the namespace is sealed otherwise than this link seals.
    static func sealChanged(_ error: SettingsError) -> SettingsError {
        SettingsError(.sealMismatch, error.message, sql: error.sql)
    }

    /// A stable replica id for a hub's namespace, derived from the hub's id and the name.
    static func peerID(hub: String, namespace: String) -> ReplicaID {
        var high = Fingerprint()
        high.mix(text: hub)
        high.mix(text: namespace)
        var low = high
        low.mix(word: 0x5345_5454)
        var bytes =
            withUnsafeBytes(of: high.value.bigEndian) { Array($0) }
            + withUnsafeBytes(of: low.value.bigEndian) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // a custom (version 8) UUID
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return ReplicaID(bytes: bytes) ?? ReplicaID.random()
    }
}

/// How far a replica pushed to a namespace, and the incarnation it pushed under.
package struct PushedRecord: Equatable, Sendable {
    /// The last local sequence number pushed (0: never).
    package var sequence: Int64
    /// The replica's running incarnation when it pushed (nil: never).
    package var incarnation: UUID?
    /// Whether the hub holds a row for the replica: one that never pushed is not counted among
    /// the machines a namespace's poll plan spreads the hub's rate over.
    package var isRegistered = true
}

/// Sealed rows refused by the reads of one `HubNamespace` since the link last took them; a
/// class so that the namespace value that reads updates what its copies hold (one connection,
/// one thread).
private final class RefusalLedger {
    var refusals = SealRefusals()
}

extension HubNamespace {
    /// The sealed rows that reads outside pulls (comparisons, fetches by key) refused since the
    /// last call.
    package func takeRefusals() -> SealRefusals {
        defer { refusalLedger.refusals = SealRefusals() }
        return refusalLedger.refusals
    }
}

/// The pushed records one `HubNamespace` read or wrote; a class so the namespace value that
/// pushes updates what its copies expect too (one connection, one thread).
private final class PushLedger {
    var records: [ReplicaID: PushedRecord] = [:]
}
