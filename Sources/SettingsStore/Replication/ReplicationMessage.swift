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
                var members = SettingsChange.KeyChange(entry).jsonMembers
                members["seq"] = .integer(entry.sequence)
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
                let fields = try JSONFields(element, what: "a replicated entry")
                let state = try SettingsChange.KeyChange(fields: fields)
                entries.append(
                    SettingEntry(
                        key: state.key, value: state.value, version: state.version,
                        sequence: try fields.integer("seq")))
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
