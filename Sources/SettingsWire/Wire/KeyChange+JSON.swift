package import SettingsStore

/// The one JSON form of a key's state, shared by change events and replicated entries:
/// `key`, `version`, and `value` or `"deleted": true`. A refusal instead reads `key`,
/// `refused` (the refused version) and the state the key kept: `value` and `version` when it
/// holds one, neither when it holds nothing; never `deleted`.
extension SettingsChange.KeyChange {
    /// The members of the key's JSON object.
    package var jsonMembers: [String: JSONValue] {
        var members: [String: JSONValue] = ["key": .string(key)]
        if let refusedVersion {
            members["refused"] = .string(refusedVersion.description)
            guard keepsState else { return members }
        }
        members["version"] = .string(version.description)
        if let value {
            members["value"] = value.json
        } else if refusedVersion == nil {
            members["deleted"] = .bool(true)
        }
        return members
    }

    /// Reads the members `jsonMembers` writes.
    package init(fields: JSONFields) throws(SettingsError) {
        let key = try fields.string("key")
        if let refused = try fields.optionalString("refused") {
            let refusedVersion = try Self.version(refused, "refused")
            let kept = try fields.optionalString("version").map { text throws(SettingsError) in
                (
                    value: try fields.members["value"] == nil ? nil : fields.value("value"),
                    version: try Self.version(text, "version")
                )
            }
            self.init(key: key, refused: refusedVersion, kept: kept)
            return
        }
        let value = try fields.bool("deleted", default: false) ? nil : try fields.value("value")
        self.init(key: key, value: value, version: try Self.version(try fields.string("version"), "version"))
    }

    private static func version(_ text: String, _ field: String) throws(SettingsError) -> SettingVersion {
        guard let version = SettingVersion(text) else {
            throw SettingsError(.protocolError, "field '\(field)' must read 'milliseconds.counter@replica'")
        }
        return version
    }
}

extension SettingsError {
    /// Reads the `error` member of a failed response: its code (unknown codes read as
    /// `protocolError`, so a newer peer's errors still surface), message, key and details.
    package init(wireError json: JSONValue?) throws(SettingsError) {
        let error = try JSONFields(json ?? .null, what: "field 'error'")
        let code = SettingsError.Code(rawValue: try error.string("code")) ?? .protocolError
        self.init(code, try error.string("message"), key: try error.optionalString("key"))
        oldestReplayableSequence = try error.optionalInteger("oldest")
        if case .object(let versions)? = error.members["versions"] {
            for (key, json) in versions {
                versionTexts[key] = if case .string(let text) = json { .some(text) } else { .some(nil) }
            }
        }
    }
}
