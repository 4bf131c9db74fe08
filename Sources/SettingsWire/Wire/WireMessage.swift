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

    /// A failed response carrying the error's code and message.
    package static func failure(id: Int64?, _ error: SettingsError) -> JSONValue {
        .object([
            "id": id.map { .integer($0) } ?? .null, "ok": .bool(false),
            "error": .object(["code": .string(error.code.rawValue), "message": .string(error.message)]),
        ])
    }

    /// A change event for watch `watch`.
    package static func event(watch: Int64, _ change: SettingsChange) -> JSONValue {
        let changes: [JSONValue] = change.changes.map { .object($0.jsonMembers) }
        return .object([
            "event": .string("change"), "watch": .integer(watch), "reason": .string(change.reason.rawValue),
            "origin": .string(change.origin.description), "changes": .array(changes),
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
        return SettingsChange(reason: reason, origin: origin, changes: changes)
    }
}

extension SettingVersion {
    /// Parses the `milliseconds.counter@replica` form of `description` (decimal digits only).
    ///
    /// Every entry a replica sends carries one, so it is read in one pass over the bytes.
    package init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ SettingVersion(utf8: $0) }) else { return nil }
        self = parsed
    }

    private init?(utf8: UnsafeBufferPointer<UInt8>) {
        var index = 0
        /// The decimal number that starts at `index` and ends before `terminator`, below `limit`.
        func number(endingAt terminator: UInt8, below limit: UInt64) -> UInt64? {
            var value: UInt64 = 0
            let start = index
            while index < utf8.count, utf8[index] != terminator {
                let digit = utf8[index] &- UInt8(ascii: "0")
                guard digit < 10, value < limit else { return nil }
                value = value * 10 + UInt64(digit)
                index += 1
            }
            guard index > start, index < utf8.count, value < limit else { return nil }
            index += 1  // the terminator
            return value
        }
        guard
            let milliseconds = number(
                endingAt: UInt8(ascii: "."), below: HybridTimestamp.maximumMilliseconds),
            let counter = number(endingAt: UInt8(ascii: "@"), below: UInt64(UInt16.max) + 1),
            let replica = ReplicaID(utf8: UnsafeBufferPointer(rebasing: utf8[index...]))
        else {
            return nil
        }
        self.init(
            timestamp: HybridTimestamp(milliseconds: milliseconds, counter: UInt16(counter)), replica: replica
        )
    }
}
