/// The one JSON form of a key's state, shared by change events and replicated entries:
/// `key`, `version`, and `value` or `"deleted": true`.
extension SettingsChange.KeyChange {
    /// The members of the key's JSON object.
    var jsonMembers: [String: JSONValue] {
        var members: [String: JSONValue] = ["key": .string(key), "version": .string(version.description)]
        if let value {
            members["value"] = value.json
        } else {
            members["deleted"] = .bool(true)
        }
        return members
    }

    /// Reads the members `jsonMembers` writes.
    init(fields: JSONFields) throws(SettingsError) {
        let value = try fields.bool("deleted", default: false) ? nil : try fields.value("value")
        guard let version = SettingVersion(try fields.string("version")) else {
            throw SettingsError(.protocolError, "field 'version' must read 'milliseconds.counter@replica'")
        }
        self.init(key: try fields.string("key"), value: value, version: version)
    }
}

extension SettingsError {
    /// Reads the `error` member of a failed response: its code (unknown codes read as
    /// `protocolError`, so a newer peer's errors still surface) and message.
    init(wireError json: JSONValue?) throws(SettingsError) {
        let error = try JSONFields(json ?? .null, what: "field 'error'")
        let code = SettingsError.Code(rawValue: try error.string("code")) ?? .protocolError
        self.init(code, try error.string("message"))
    }
}
