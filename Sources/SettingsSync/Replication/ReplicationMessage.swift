package import SettingsStore
import SettingsWire

/// The frames of a replica connection after the hello (see `docs/SYNC.md`).
package enum ReplicationMessage: Equatable {
    /// Entries in sequence order, `through` the last sequence number the batch covers;
    /// `sequence` is how far the sender's log goes that this receiver may still expect.
    case replicate(entries: [SettingEntry], through: Int64, sequence: Int64)
    /// Everything through `through` is durable at the sender; and the receiver needs nothing of
    /// the sender's log through `settled` (sent and acknowledged, or skipped because the receiver
    /// has it), so it may count that far as received without a batch saying so.
    case acknowledge(through: Int64, settled: Int64)
    /// Start sending after `cursor` (the connecting side's second message).
    case start(cursor: Int64)
    /// The replicas the sender is connected to now: it receives their own writes from them.
    case neighbours([ReplicaID])
    /// Anti-entropy, from the replica with the lower id once nothing is in flight its way:
    /// compare digests. `settled` is as in `acknowledge`.
    case check(digest: UInt64, settled: Int64)
    /// The answer to `check` when the digests are equal; `settled` is as in `acknowledge`.
    case agreed(settled: Int64)
    /// The answer to `check` while the answerer still has changes in flight: try again later.
    case busy
    /// The answer to `check` when the digests differ: the answerer's bucket sums.
    case buckets([UInt64])
    /// The entries of the differing buckets: first the checker's (`final` false), then the
    /// answerer's winners among them (`final` true), with how many of the checker's it applied.
    case repair(buckets: [Int], entries: [SettingEntry], final: Bool, applied: Int)
    /// The receiver's history forked (restored or copied): it must take a new replica id.
    case forked(reason: String)
    /// The receiver could not store the last batch or repair (its disk is full, its file is
    /// read-only): it drops every batch until `retry`; the sender resends after its
    /// acknowledged position, later.
    case refused(reason: String)
    /// The sender resends after its acknowledged position: batches are stored again.
    case retry

    var json: JSONValue {
        switch self {
        case .replicate(let entries, let through, let sequence):
            return .object([
                "op": "replicate", "entries": Self.json(entries), "through": .integer(through),
                "sequence": .integer(sequence),
            ])
        case .acknowledge(let through, let settled):
            return .object(["op": "ack", "through": .integer(through), "settled": .integer(settled)])
        case .start(let cursor):
            return .object(["op": "start", "cursor": .integer(cursor)])
        case .neighbours(let replicas):
            return .object(["op": "neighbours", "replicas": .array(replicas.map { .string($0.description) })])
        case .check(let digest, let settled):
            return .object(["op": "check", "digest": .string(Self.hex(digest)), "settled": .integer(settled)])
        case .agreed(let settled):
            return .object(["op": "agreed", "settled": .integer(settled)])
        case .busy:
            return .object(["op": "busy"])
        case .buckets(let sums):
            return .object(["op": "buckets", "sums": .string(sums.map(Self.hex).joined())])
        case .repair(let buckets, let entries, let final, let applied):
            return .object([
                "op": "repair", "buckets": .array(buckets.map { .integer(Int64($0)) }),
                "entries": Self.json(entries), "final": .bool(final), "applied": .integer(Int64(applied)),
            ])
        case .forked(let reason):
            return .object(["op": "forked", "reason": .string(reason)])
        case .refused(let reason):
            return .object(["op": "refused", "reason": .string(reason)])
        case .retry:
            return .object(["op": "retry"])
        }
    }

    package init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "a replication message")
        try self.init(fields: fields) { () throws(SettingsError) in try Self.entries(fields) }
    }

    /// The message `fields` hold, with the entries of a batch or a repair from `entries` (read
    /// from `fields`, or already read from the frame: `init(frame:)`).
    package init(fields: JSONFields, entries: () throws(SettingsError) -> [SettingEntry])
        throws(SettingsError)
    {
        // A peer that ends the session says why in the wire's error frame, not a replication message.
        if fields.members["op"] == nil, let error = fields.members["error"] {
            let cause = try SettingsError(wireError: error)
            throw SettingsError(cause.code, "the peer ended the session: \(cause.message)")
        }
        switch try fields.string("op") {
        case "replicate":
            self = .replicate(
                entries: try entries(), through: try Self.position(fields, "through"),
                sequence: try Self.position(fields, "sequence"))
        case "ack":
            self = .acknowledge(
                through: try Self.position(fields, "through"),
                settled: try Self.position(fields, "settled", default: 0))
        case "start":
            self = .start(cursor: try Self.position(fields, "cursor"))
        case "neighbours":
            var replicas: [ReplicaID] = []
            for text in try fields.strings("replicas", limit: 10_000) ?? [] {
                guard let replica = ReplicaID(text) else {
                    throw SettingsError(.protocolError, "field 'replicas' must list replica ids")
                }
                replicas.append(replica)
            }
            self = .neighbours(replicas)
        case "check":
            self = .check(
                digest: try Self.word(fields.string("digest"), field: "digest"),
                settled: try Self.position(fields, "settled", default: 0))
        case "agreed":
            self = .agreed(settled: try Self.position(fields, "settled", default: 0))
        case "busy":
            self = .busy
        case "buckets":
            self = .buckets(try Self.sums(fields.string("sums")))
        case "repair":
            var buckets: [Int] = []
            for element in try fields.array("buckets", limit: ReplicaCache.bucketCount) {
                guard case .integer(let index) = element,
                    (0..<Int64(ReplicaCache.bucketCount)).contains(index)
                else {
                    throw SettingsError(.protocolError, "field 'buckets' must list bucket numbers")
                }
                buckets.append(Int(index))
            }
            self = .repair(
                buckets: buckets, entries: try entries(),
                final: try fields.bool("final", default: true),
                applied: Int(try Self.position(fields, "applied", default: 0)))
        case "forked":
            self = .forked(reason: try fields.string("reason"))
        case "refused":
            self = .refused(reason: String(try fields.string("reason").prefix(Self.maximumReasonCharacters)))
        case "retry":
            self = .retry
        case let operation:
            throw SettingsError(
                .unknownOperation, "unknown replication message '\(operation.debugDescriptionTruncated)'")
        }
    }

    /// The longest reason a peer's `refused` frame is kept with (the rest is cut off).
    static let maximumReasonCharacters = 1_000

    private static func json(_ entries: [SettingEntry]) -> JSONValue {
        .array(
            entries.map { entry in
                var members = SettingsChange.KeyChange(entry).jsonMembers
                members["seq"] = .integer(entry.sequence)
                return .object(members)
            })
    }

    private static func entries(_ fields: JSONFields) throws(SettingsError) -> [SettingEntry] {
        var entries: [SettingEntry] = []
        for element in try fields.array("entries", limit: .max) {
            entries.append(try entry(JSONFields(element, what: "a replicated entry")))
        }
        return entries
    }

    /// One entry of a batch or a repair.
    static func entry(_ fields: JSONFields) throws(SettingsError) -> SettingEntry {
        let state = try SettingsChange.KeyChange(fields: fields)
        guard state.refusedVersion == nil else {
            throw SettingsError(.protocolError, "a replicated entry cannot be a refusal (field 'refused')")
        }
        return SettingEntry(
            key: state.key, value: state.value, version: state.version,
            sequence: try fields.optionalInteger("seq") ?? 0)
    }

    /// A position from a peer (`Arrival.position`): absent only where `default` is given.
    private static func position(_ fields: JSONFields, _ name: String, default fallback: Int64? = nil)
        throws(SettingsError) -> Int64
    {
        guard let value = try fields.optionalInteger(name) ?? fallback else {
            throw SettingsError(.protocolError, "missing field '\(name)' (an integer)")
        }
        return try Arrival.position(value, "field '\(name)'")
    }

    /// The bucket sums: `bucketCount` words of 16 hexadecimal digits, read by bytes (a
    /// multi-byte character is no digit, whatever its width).
    private static func sums(_ text: String) throws(SettingsError) -> [UInt64] {
        let bytes = Array(text.utf8)
        guard bytes.count == 16 * ReplicaCache.bucketCount else {
            throw SettingsError(
                .protocolError, "field 'sums' must hold \(ReplicaCache.bucketCount) 16-digit sums")
        }
        var sums: [UInt64] = []
        sums.reserveCapacity(ReplicaCache.bucketCount)
        for start in stride(from: 0, to: bytes.count, by: 16) {
            var word: UInt64 = 0
            for byte in bytes[start..<start + 16] {
                guard let digit = byte.hexDigitValue else {
                    throw SettingsError(.protocolError, "field 'sums' must be 16 hexadecimal digits per sum")
                }
                word = word << 4 | UInt64(digit)
            }
            sums.append(word)
        }
        return sums
    }

    static func hex(_ word: UInt64) -> String {
        let text = String(word, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private static func word(_ text: String, field: String) throws(SettingsError) -> UInt64 {
        guard text.utf8.count == 16, let word = UInt64(text, radix: 16) else {
            throw SettingsError(.protocolError, "field '\(field)' must be 16 hexadecimal digits")
        }
        return word
    }
}
