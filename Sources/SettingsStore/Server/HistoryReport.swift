/// History records on the wire (`history`; see `docs/PROTOCOL.md`).
enum HistoryReport {
    static func json(of record: HistoryRecord) -> JSONValue {
        var members: [String: JSONValue] = [
            "key": .string(record.key), "deleted": .bool(record.isDeletion),
            "version": .string(record.version.description), "sequence": .integer(record.sequence),
            "reason": .string(record.reason), "replica": .string(record.origin.description),
            "timeMs": .integer(Int64(clamping: record.timeMilliseconds)),
        ]
        if let value = record.value { members["value"] = value.json }
        if let previous = record.previous { members["previous"] = previous.json }
        if record.isRedacted { members["redacted"] = .bool(true) }
        if let actor = record.actor {
            members["uid"] = .integer(Int64(actor.uid))
            members["pid"] = .integer(Int64(actor.pid))
            if let executable = actor.executable { members["exe"] = .string(executable) }
        }
        return .object(members)
    }
}
