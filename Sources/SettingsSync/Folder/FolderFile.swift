import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One batch or snapshot file of a synced folder: JSON lines, so that a file cut short by a
/// syncer still parses as far as it got and is known to be incomplete.
///
/// ```
/// {"settingsd":"folder","version":1,"kind":"batch","replica":"…","incarnation":"…","first":101,"last":140,"count":2,"writers":["…"],"base":1796636242169}
/// ["ui.theme","dark",0,0,0,101]
/// ["ui.zoom",null,7831,3,0,140]
/// {"end":2,"checksum":"9f0c1e…"}
/// ```
///
/// An entry is `[key, value (null: deleted), milliseconds after base, counter, writer,
/// sequence]`: its version is `(base + milliseconds).counter@writers[writer]`, so a file repeats
/// no replica id and no full time. A snapshot's entries carry sequence 0 (it covers everything
/// through `last`).
///
/// In a sealed folder an entry's key is its key id and its value the sealed entry in base 64
/// (`EntrySealer`): `["3f9c…", "AaYx…", 0, 0, 0, 101]`, and the header names the key
/// (`"sealed":"<key id>"`). A file in the clear is refused there, and an entry that does not
/// open is refused alone (`refusals`).
///
/// The last line counts the entries and carries an FNV-1a 64-bit checksum of every byte before
/// it: a file without it, or whose sum differs, is incomplete (a syncer still copying it) and
/// read again when it changes.
struct FolderFile: Equatable {
    /// A batch (entries `first…last`) or a snapshot (everything through `last`; `first` is 1).
    enum Kind: String {
        case batch
        case snapshot
    }

    var kind: Kind
    /// The replica whose entries these are.
    var replica: ReplicaID
    /// Its incarnation when it wrote the file.
    var incarnation: UUID
    /// The first local sequence number the file covers.
    var first: Int64
    /// The last local sequence number the file covers.
    var last: Int64
    /// The entries, each with its writer's local sequence number.
    var entries: [SettingEntry]
    /// Sealed entries of the file that were refused when it was read.
    var refusals = SealRefusals()

    /// The format's version; a file of a newer one is refused by name.
    static let version = 1
    /// The most entries a file may hold; a replica's snapshot of more is refused.
    static let maximumEntries = 1_000_000
    /// The largest file read.
    static let maximumBytes = 512 << 20

    /// The file's bytes, its entries sealed by `sealer` when the folder is sealed.
    func encoded(sealedBy sealer: EntrySealer? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        var writers: [ReplicaID] = []
        var indexes: [ReplicaID: Int] = [:]
        for entry in entries where indexes[entry.version.replica] == nil {
            indexes[entry.version.replica] = writers.count
            writers.append(entry.version.replica)
        }
        let base = entries.map(\.version.timestamp.milliseconds).min() ?? 0
        var fields: [String: JSONValue] = [
            "settingsd": "folder", "version": .integer(Int64(Self.version)), "kind": .string(kind.rawValue),
            "replica": .string(replica.description), "incarnation": .string(incarnation.uuidString),
            "first": .integer(first), "last": .integer(last), "count": .integer(Int64(entries.count)),
            "writers": .array(writers.map { .string($0.description) }), "base": .integer(Int64(base)),
        ]
        if let sealer { fields["sealed"] = .string(sealer.key.id) }
        let header: JSONValue = .object(fields)
        header.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        for entry in entries {
            let stamp = entry.version.timestamp
            var key = JSONValue.string(entry.key)
            var value = entry.value?.json ?? .null
            if let sealer {
                let sealed = sealer.seal(entry)
                key = .string(sealed.keyID)
                value = .string(Data(sealed.sealed).base64EncodedString())
            }
            let line: JSONValue = .array([
                key, value, .integer(Int64(stamp.milliseconds - base)),
                .integer(Int64(stamp.counter)), .integer(Int64(indexes[entry.version.replica] ?? 0)),
                .integer(kind == .batch ? entry.sequence : 0),
            ])
            line.write(to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        let trailer: JSONValue = .object([
            "end": .integer(Int64(entries.count)), "checksum": .string(Self.checksum(bytes[...])),
        ])
        trailer.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// What reading a file found.
    enum Reading: Equatable {
        case complete(FolderFile)
        /// Cut short or not yet whole (a syncer still copying it): read again when it changes.
        case incomplete(String)
        /// Whole but wrong (a newer format, another replica's, malformed): never applied.
        case invalid(String)
    }

    /// Reads a file's bytes, checking them against the header and trailer and the name they
    /// were found under (`replica`, and the kind and range the name says). The entries' keys and
    /// values are checked by the store's limits when they are applied, as any replica's are.
    ///
    /// In a sealed folder (`sealer`), a file in the clear is refused whole, and each entry is
    /// opened: one that does not open is left out and noted in the file's `refusals`.
    static func read(_ bytes: [UInt8], replica: ReplicaID, name: FolderFileName, sealer: EntrySealer? = nil)
        -> Reading
    {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard bytes.last == UInt8(ascii: "\n"), lines.count >= 3 else {
            return .incomplete("it ends before its last line")
        }
        let trailerLine = lines[lines.count - 2]
        let body = bytes[..<trailerLine.startIndex]
        do throws(SettingsError) {
            guard let trailer = try? JSONFields(parsing: trailerLine, what: "the trailer"),
                let end = try? trailer.integer("end"), let sum = try? trailer.string("checksum")
            else { return .incomplete("it has no trailer yet") }
            guard sum == checksum(body) else {
                return .incomplete("its checksum does not match (still being copied?)")
            }
            let header = try JSONFields(parsing: lines[0], what: "the header")
            guard try header.string("settingsd") == "folder" else {
                return .invalid("it is not a settingsd folder file")
            }
            let version = try header.integer("version")
            guard version == Int64(Self.version) else {
                return .invalid(
                    "it is in folder format \(version), this settingsd reads \(Self.version): upgrade it")
            }
            guard let kind = Kind(rawValue: try header.string("kind")) else {
                return .invalid("unknown kind")
            }
            guard try header.replicaID("replica") == replica else {
                return .invalid("its header names another replica than its folder")
            }
            guard let incarnation = UUID(uuidString: try header.string("incarnation")) else {
                return .invalid("its incarnation is not a UUID")
            }
            let first = try header.integer("first")
            let last = try header.integer("last")
            let count = try header.integer("count")
            switch (kind, name) {
            case (.batch, .batch(let nameFirst, let nameLast, let tag)):
                guard nameFirst == first, nameLast == last, tag == FolderFileName.tag(of: incarnation) else {
                    return .invalid("its header does not match its name")
                }
            case (.snapshot, .snapshot(let through, let tag)):
                guard through == last, first == 1, tag == FolderFileName.tag(of: incarnation) else {
                    return .invalid("its header does not match its name")
                }
            default:
                return .invalid("its kind does not match its name")
            }
            guard count == end, count == Int64(lines.count - 3), count <= Int64(Self.maximumEntries) else {
                return .invalid("it counts \(count) entries, holds \(lines.count - 3), ends at \(end)")
            }
            let writers = try (header.optionalArray("writers") ?? []).map { json throws(SettingsError) in
                guard case .string(let text) = json, let id = ReplicaID(text) else {
                    throw SettingsError(.protocolError, "a writer is not a replica id")
                }
                return id
            }
            let base = try header.optionalInteger("base") ?? 0
            guard (0..<(1 << 46)).contains(base) else { return .invalid("its base time is out of range") }
            let sealedUnder = header.members["sealed"]
            if sealer != nil, sealedUnder == nil {
                return .invalid("it is in the clear, in a sealed folder (never applied)")
            }
            if sealer == nil, case .string(let key)? = sealedUnder {
                return .invalid(
                    "it is sealed under key \(key), and this machine syncs the folder in the clear")
            }
            var entries: [SettingEntry] = []
            var refusals = SealRefusals()
            entries.reserveCapacity(Int(count))
            for line in lines[1..<(lines.count - 2)] {
                var entry = try Self.entry(
                    JSONValue.parse(line), writers: writers, base: base, sealed: sealer != nil)
                if let sealer {
                    guard let opened = Self.open(entry, sealer: sealer, refusals: &refusals) else { continue }
                    entry = opened
                }
                guard
                    kind == .snapshot
                        ? entry.sequence == 0 : (entry.sequence >= first && entry.sequence <= last)
                else {
                    return .invalid(
                        "an entry's sequence number \(entry.sequence) is outside \(first)…\(last)")
                }
                entries.append(entry)
            }
            return .complete(
                FolderFile(
                    kind: kind, replica: replica, incarnation: incarnation, first: first, last: last,
                    entries: entries, refusals: refusals))
        } catch {
            return .invalid(error.message)
        }
    }

    /// FNV-1a, 64 bits, in 16 hexadecimal digits: finds a file cut short or damaged in copying
    /// (not a defence against someone who edits it: the entries' versions and the arrival gate
    /// are).
    static func checksum(_ bytes: ArraySlice<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// A sealed entry as `entry(_:writers:base:sealed:)` read it (its key the key id, its value
    /// the sealed bytes as data), opened; nil when refused (noted in `refusals`).
    private static func open(_ entry: SettingEntry, sealer: EntrySealer, refusals: inout SealRefusals)
        -> SettingEntry?
    {
        guard case .data(let sealed)? = entry.value else {
            refusals.note(.malformed("its value is not sealed"), key: entry.key)
            return nil
        }
        let result = sealed.withUnsafeBytes { bytes in
            sealer.open(keyID: entry.key, sealed: bytes, version: entry.version, sequence: entry.sequence)
        }
        switch result {
        case .success(let opened): return opened
        case .failure(let refusal):
            refusals.note(refusal, key: entry.key, version: entry.version)
            return nil
        }
    }

    /// Reads one entry line, `[key, value, milliseconds after base, counter, writer, sequence]`;
    /// when `sealed`, the value is the sealed entry in base 64, returned as data to open.
    private static func entry(_ json: JSONValue, writers: [ReplicaID], base: Int64, sealed: Bool)
        throws(SettingsError) -> SettingEntry
    {
        guard case .array(let fields) = json, fields.count == 6, case .string(let key) = fields[0],
            case .integer(let milliseconds) = fields[2], case .integer(let counter) = fields[3],
            case .integer(let writer) = fields[4], case .integer(let sequence) = fields[5]
        else {
            throw SettingsError(
                .protocolError, "an entry must read [key, value, milliseconds, counter, writer, sequence]")
        }
        // Stamps as the arrival gate takes them (before 2^46 ms), a counter of 16 bits.
        guard milliseconds >= 0, (0..<(1 << 46)).contains(base + milliseconds),
            (0...Int64(UInt16.max)).contains(counter),
            writers.indices.contains(Int(clamping: writer))
        else { throw SettingsError(.protocolError, "an entry's version is out of range (key '\(key)')") }
        let value: SettingValue?
        if sealed {
            guard case .string(let text) = fields[1] else {
                throw SettingsError(
                    .protocolError, "a sealed entry's value is not a string (key id '\(key)')")
            }
            // Not base 64 at all: refused with the entry, as a seal that does not open.
            value = .data(Data(base64Encoded: text) ?? Data())
        } else {
            value =
                fields[1] == .null
                ? nil : try JSONFields(.object(["value": fields[1]]), what: "an entry").value("value")
        }
        let version = SettingVersion(
            timestamp: HybridTimestamp(milliseconds: UInt64(base + milliseconds), counter: UInt16(counter)),
            replica: writers[Int(writer)])
        return SettingEntry(key: key, value: value, version: version, sequence: sequence)
    }
}
