/// The frames of a replica connection (see `docs/SYNC.md`).
enum ReplicationMessage {
    /// Entries in sequence order, `through` the last one's sequence number.
    case replicate(entries: [SettingEntry], through: Int64, sequence: Int64)
    /// Everything through `through` is durable at the sender.
    case acknowledge(through: Int64)
    /// Start sending after `cursor` (the connecting side's second message).
    case start(cursor: Int64)

    var json: JSONValue {
        switch self {
        case .replicate(let entries, let through, let sequence):
            let encoded: [JSONValue] = entries.map { entry in
                var members: [String: JSONValue] = [
                    "key": .string(entry.key), "version": .string(entry.version.description),
                    "seq": .integer(entry.sequence),
                ]
                if let value = entry.value {
                    members["value"] = value.json
                } else {
                    members["deleted"] = .bool(true)
                }
                return .object(members)
            }
            return .object([
                "op": "replicate", "entries": .array(encoded), "through": .integer(through),
                "sequence": .integer(sequence),
            ])
        case .acknowledge(let through):
            return .object(["op": "ack", "through": .integer(through)])
        case .start(let cursor):
            return .object(["op": "start", "cursor": .integer(cursor)])
        }
    }

    init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "a replication message")
        switch try fields.string("op") {
        case "replicate":
            var entries: [SettingEntry] = []
            for element in try fields.array("entries", limit: .max) {
                let entry = try JSONFields(element, what: "a replicated entry")
                guard let version = SettingVersion(try entry.string("version")) else {
                    throw SettingsError(
                        .protocolError, "field 'version' must read 'milliseconds.counter@replica'")
                }
                let value = try entry.bool("deleted", default: false) ? nil : try entry.value("value")
                entries.append(
                    SettingEntry(
                        key: try entry.string("key"), value: value, version: version,
                        sequence: try entry.integer("seq")))
            }
            self = .replicate(
                entries: entries, through: try fields.integer("through"),
                sequence: try fields.integer("sequence"))
        case "ack":
            self = .acknowledge(through: try fields.integer("through"))
        case "start":
            self = .start(cursor: try fields.integer("cursor"))
        case let operation:
            throw SettingsError(
                .unknownOperation, "unknown replication message '\(operation.debugDescriptionTruncated)'")
        }
    }
}
