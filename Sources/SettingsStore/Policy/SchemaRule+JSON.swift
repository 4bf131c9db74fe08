/// A rule as `describe` and `schema` answer it: the schema file's own form of the rule, plus the
/// key or pattern it declares, the file it came from and, for a rule that only sets a scope,
/// `"scopeOnly": true` (see `docs/PROTOCOL.md`).
extension SchemaRule {
    /// The rule in its wire form.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "key": .string(key), "scope": .string(scope.rawValue), "file": .string(file),
        ]
        if let summary { members["summary"] = .string(summary) }
        if let description { members["description"] = .string(description) }
        guard !isScopeOnly else {
            members["scopeOnly"] = .bool(true)
            return .object(members)
        }
        members["type"] = .string(type.rawValue)
        if let native = nativeType?.base { members[native.field] = .string(native.text) }
        if isSecret { members["secret"] = .bool(true) }
        if let defaultValue { members["default"] = defaultValue.json }
        if let minimum { members["min"] = .double(minimum) }
        if let maximum { members["max"] = .double(maximum) }
        if let choices { members["choices"] = .array(choices.map { .string($0) }) }
        if let maximumLength { members["maxLength"] = .integer(Int64(maximumLength)) }
        return .object(members)
    }

    /// Reads a rule's wire form with the schema files' own reader, trusting what a daemon already
    /// holds (its rules were checked when their files were read).
    ///
    /// - Throws: `protocolError` when `json` is not a rule.
    package init(json: JSONValue) throws(SettingsError) {
        guard case .object(var members) = json, case .string(let key)? = members.removeValue(forKey: "key"),
            case .string(let file)? = members.removeValue(forKey: "file")
        else {
            throw SettingsError(.protocolError, "a schema rule must be an object with a key and a file")
        }
        let scopeOnly = members.removeValue(forKey: "scopeOnly") == .bool(true)
        do throws(SettingsError) {
            self = try SettingsPolicy.rule(key: key, json: .object(members), file: file, trusted: true)
        } catch {
            throw SettingsError(
                .protocolError, "the rule for '\(key)' cannot be read: \(error.message)", key: key)
        }
        guard isScopeOnly == scopeOnly else {
            let problem = scopeOnly ? "is marked scopeOnly but declares a type" : "declares no type"
            throw SettingsError(.protocolError, "the rule for '\(key)' \(problem)", key: key)
        }
    }
}
