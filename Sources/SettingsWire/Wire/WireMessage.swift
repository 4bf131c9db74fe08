package import SettingsStore

/// Builds and reads the response and event frames of the wire protocol.
package enum WireMessage {
    /// A successful response carrying `result`'s fields.
    package static func success(id: Int64?, _ result: [String: JSONValue] = [:]) -> JSONValue {
        var members = result
        members["id"] = id.map { .integer($0) } ?? .null
        members["ok"] = .bool(true)
        return .object(members)
    }

    /// A failed response carrying the error's code, message and details (`versions`, `oldest`).
    package static func failure(id: Int64?, _ error: SettingsError) -> JSONValue {
        var fields: [String: JSONValue] = ["code": .string(error.code.rawValue)]
        if let oldest = error.oldestReplayableSequence { fields["oldest"] = .integer(oldest) }
        if !error.versionTexts.isEmpty {
            fields["versions"] = .object(error.versionTexts.mapValues { $0.map { .string($0) } ?? .null })
        }
        fields["message"] = .string(error.message)
        if let key = error.key { fields["key"] = .string(key) }
        return .object(["id": id.map { .integer($0) } ?? .null, "ok": .bool(false), "error": .object(fields)])
    }

    /// A change event for watch `watch`.
    package static func event(watch: Int64, _ change: SettingsChange) -> JSONValue {
        let changes: [JSONValue] = change.changes.map { .object($0.jsonMembers) }
        return .object([
            "event": .string("change"), "watch": .integer(watch), "reason": .string(change.reason.rawValue),
            "origin": .string(change.origin.description), "changes": .array(changes),
            "sequence": .integer(change.sequence),
        ])
    }

    /// A frame received by a client.
    package enum Incoming: Sendable {
        /// The answer to request `id`: its result fields (without `id` and `ok`), or the error.
        case response(id: Int64?, Result<WireAnswer, SettingsError>)
        /// A change event for a watch.
        case event(watch: Int64, SettingsChange)
    }

    /// Reads a frame a daemon sent.
    package static func decode(_ json: JSONValue) throws(SettingsError) -> Incoming {
        guard case .object(let members) = json else {
            throw SettingsError(
                .protocolError, "a daemon message must be a JSON object, not \(json.typeName)")
        }
        return try decode(WireEnvelope(members))
    }

    /// Reads a frame a daemon sent, straight from its bytes.
    package static func decode(frame: ArraySlice<UInt8>) throws(SettingsError) -> Incoming {
        var envelope = WireEnvelope()
        try JSONParser.parseObject(frame, what: "a daemon message", into: &envelope)
        return try decode(envelope)
    }

    private static func decode(_ envelope: WireEnvelope) throws(SettingsError) -> Incoming {
        let members = envelope.fields
        if envelope.isEvent {
            let fields = JSONFields(members)
            return .event(watch: try fields.integer("watch"), try decodeChange(fields))
        }
        let id = try JSONFields.optionalInteger(envelope.id, name: "id")
        guard try JSONFields.bool(envelope.ok, name: "ok", default: false) else {
            return .response(id: id, .failure(try SettingsError(wireError: members["error"])))
        }
        // The result's own fields, as a `DirectClient` returns them: without the envelope.
        return .response(id: id, .success(WireAnswer(members)))
    }

    private static func decodeChange(_ fields: JSONFields) throws(SettingsError) -> SettingsChange {
        let reasonName = try fields.string("reason")
        guard let reason = ChangeReason(rawValue: reasonName) else {
            throw SettingsError(.protocolError, "unknown change reason '\(reasonName)'")
        }
        let origin = try fields.replicaID("origin")
        var changes: [SettingsChange.KeyChange] = []
        for element in try fields.array("changes", limit: .max) {
            changes.append(
                try SettingsChange.KeyChange(fields: JSONFields(element, what: "each of 'changes'")))
        }
        // A daemon older than sequences in events sends none: such a change is at 0.
        let sequence = try fields.optionalInteger("sequence") ?? 0
        return SettingsChange(reason: reason, origin: origin, changes: changes, sequence: sequence)
    }
}
