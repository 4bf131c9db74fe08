package import SettingsStore
import SettingsWire

/// History records on the wire (`history`; see `docs/PROTOCOL.md`).
extension HistoryRecord {
    /// The record's wire form.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "key": .string(key), "deleted": .bool(isDeletion), "version": .string(version.description),
            "sequence": .integer(sequence), "reason": .string(reason), "replica": .string(origin.description),
            "timeMs": .integer(Int64(clamping: timeMilliseconds)),
        ]
        members["value"] = value?.json
        members["previous"] = previous?.json
        if isRedacted { members["redacted"] = .bool(true) }
        members["replicaName"] = originName.map { .string($0) }
        if let actor {
            members["uid"] = .integer(Int64(actor.uid))
            members["pid"] = .integer(Int64(actor.pid))
            members["exe"] = actor.executable.map { .string($0) }
        }
        return .object(members)
    }

    /// Reads a record's wire form.
    package init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "a history record")
        let versionText = try fields.string("version")
        guard let version = SettingVersion(versionText) else {
            throw SettingsError(
                .protocolError, "'\(versionText)' is not a version (milliseconds.counter@replica)")
        }
        let actor = try fields.optionalInteger("uid").map { uid throws(SettingsError) in
            ChangeActor(
                uid: UInt32(clamping: uid), pid: Int32(clamping: try fields.optionalInteger("pid") ?? 0),
                executable: try fields.optionalString("exe"))
        }
        self.init(
            key: try fields.string("key"),
            value: try fields.members["value"].map { json throws(SettingsError) in
                try SettingValue(json: json)
            },
            previous: try fields.members["previous"].map { json throws(SettingsError) in
                try SettingValue(json: json)
            },
            isRedacted: try fields.bool("redacted", default: false), version: version,
            sequence: try fields.integer("sequence"), reason: try fields.string("reason"),
            origin: try fields.replicaID("replica"),
            timeMilliseconds: UInt64(clamping: try fields.integer("timeMs")), actor: actor)
        originName = try fields.optionalString("replicaName")
    }
}
