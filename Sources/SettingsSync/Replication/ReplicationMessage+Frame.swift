package import SettingsStore
import SettingsWire

/// The text of replication frames, written and read without the `JSONValue` tree for the
/// entries of a batch or a repair: an initial sync is a hundred such frames of a thousand
/// entries, and the tree was most of the time spent on them.
///
/// Both directions are exactly what `json` and `init(json:)` do, and are tested as such: the
/// bytes are those `json` serializes to (members in sorted order), and a frame reads as
/// `init(json:)` reads it, the same message or the same error.
extension ReplicationMessage {
    /// Appends the frame's compact JSON text (no newline).
    package func write(to bytes: inout [UInt8]) {
        switch self {
        case .replicate(let entries, let through, let sequence):
            bytes.append(contentsOf: #"{"entries":"#.utf8)
            Self.write(entries, to: &bytes)
            bytes.append(contentsOf: #","op":"replicate","sequence":"#.utf8)
            JSONValue.write(integer: sequence, to: &bytes)
            bytes.append(contentsOf: #","through":"#.utf8)
            JSONValue.write(integer: through, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        case .repair(let buckets, let entries, let final, let applied):
            bytes.append(contentsOf: #"{"applied":"#.utf8)
            JSONValue.write(integer: Int64(applied), to: &bytes)
            bytes.append(contentsOf: #","buckets":["#.utf8)
            for (index, bucket) in buckets.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONValue.write(integer: Int64(bucket), to: &bytes)
            }
            bytes.append(contentsOf: #"],"entries":"#.utf8)
            Self.write(entries, to: &bytes)
            bytes.append(contentsOf: (final ? #","final":true"# : #","final":false"#).utf8)
            bytes.append(contentsOf: #","op":"repair"}"#.utf8)
        default:
            json.write(to: &bytes)
        }
    }

    /// Each entry as `KeyChange.jsonMembers` and `seq`, in the order `JSONValue` sorts them:
    /// `deleted`, `key`, `seq`, `value`, `version`.
    private static func write(_ entries: [SettingEntry], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, entry) in entries.enumerated() {
            bytes.append(contentsOf: (index == 0 ? "{" : ",{").utf8)
            if entry.value == nil { bytes.append(contentsOf: #""deleted":true,"#.utf8) }
            bytes.append(contentsOf: #""key":"#.utf8)
            JSONValue.write(string: entry.key, to: &bytes)
            bytes.append(contentsOf: #","seq":"#.utf8)
            JSONValue.write(integer: entry.sequence, to: &bytes)
            if let value = entry.value {
                bytes.append(contentsOf: #","value":"#.utf8)
                value.json.write(to: &bytes)
            }
            bytes.append(contentsOf: #","version":"#.utf8)
            JSONValue.write(string: entry.version.description, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Reads a frame from a peer: the entries of a batch or a repair straight into entries, the
    /// rest as `init(json:)` does. A frame the quick reading refuses is read again that way, so
    /// that its error (or, were the two to differ, its message) is the one `init(json:)` gives.
    package init(frame: ArraySlice<UInt8>) throws(SettingsError) {
        do throws(SettingsError) {
            var members = FrameMembers()
            try JSONParser.parseObject(frame, what: "a replication message", into: &members)
            let fields = JSONFields(JSONMembers(members.others))
            let entries = members.entries
            try self.init(fields: fields) { () throws(SettingsError) in
                // Absent: `init(json:)` says how the batch is wrong.
                guard let entries else { throw SettingsError(.protocolError, "no entries") }
                return entries
            }
        } catch {
            try self.init(json: JSONValue.parse(frame))
        }
    }
}

/// The members of a replication frame: `entries` read entry by entry, each a list of members
/// checked by `ReplicationMessage.entry`; the others kept as values.
private struct FrameMembers: JSONMemberSink {
    var others = JSONMembers.List()
    var entries: [SettingEntry]?

    mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
        others.insert(value, forName: name)
    }

    mutating func readMember(named name: String, from cursor: inout JSONCursor, depth: Int)
        throws(SettingsError) -> Bool
    {
        guard name == "entries" else { return false }
        guard entries == nil else { throw cursor.failure("duplicate key 'entries'") }
        // As `JSONCursor.array` reads an array at `depth + 1`, and its objects one deeper.
        guard cursor.peek() == UInt8(ascii: "["), depth + 1 <= JSONParser.maximumDepth else {
            throw SettingsError(.protocolError, "field 'entries' must be an array of entries")
        }
        cursor.offset += 1
        var read: [SettingEntry] = []
        cursor.skipWhitespace()
        if cursor.peek() == UInt8(ascii: "]") {
            cursor.offset += 1
            entries = read
            return true
        }
        while true {
            cursor.skipWhitespace()
            guard cursor.peek() == UInt8(ascii: "{") else {
                throw SettingsError(.protocolError, "a replicated entry must be a JSON object")
            }
            var members = JSONMembers.List()
            try cursor.object(depth: depth + 2, into: &members)
            read.append(try ReplicationMessage.entry(JSONFields(JSONMembers(members))))
            cursor.skipWhitespace()
            switch cursor.peek() {
            case UInt8(ascii: ","): cursor.offset += 1
            case UInt8(ascii: "]"):
                cursor.offset += 1
                entries = read
                return true
            default: throw cursor.failure("expected ',' or ']'")
            }
        }
    }
}
