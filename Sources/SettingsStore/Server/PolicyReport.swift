/// The answers to `describe` and `schema`: what the policy says of keys, as JSON fields.
enum PolicyReport {
    /// Everything known about `key`: its rule, lock, system default, effective value and source.
    static func describe(_ key: String, in settings: Settings) -> [String: JSONValue] {
        let policy = settings.policy
        var fields: [String: JSONValue] = [
            "key": .string(key), "source": .string(settings.source(ofKey: key).description),
        ]
        if let value = settings.value(forKey: key) { fields["value"] = value.json }
        if let rule = policy.schema.rule(forKey: key) { fields["schema"] = json(of: rule) }
        fields["scope"] = .string(policy.schema.scope(forKey: key).rawValue)
        if let rule = policy.schema.scopeRule(forKey: key) { fields["scopeRule"] = json(of: rule) }
        if let problem = schemaProblem(key, in: settings) { fields["schemaProblem"] = .string(problem) }
        if let lock = policy.lock(forKey: key) { fields["lockedBy"] = .string(lock.file) }
        if let system = policy.systemDefaults[key] {
            fields["systemDefault"] = system.value.json
            fields["systemDefaultFile"] = .string(system.file)
        }
        return fields
    }

    /// Every rule, with the effective value of each declared key.
    static func schema(of settings: Settings) -> [String: JSONValue] {
        let schema = settings.policy.schema
        let rules = (schema.rules + schema.scopeRules).sorted { $0.key < $1.key }
        return [
            "keys": .array(
                rules.map { rule in
                    var members: [String: JSONValue] = ["rule": json(of: rule)]
                    if !rule.isPattern, !rule.isScopeOnly, let value = settings.value(forKey: rule.key) {
                        members["value"] = value.json
                    }
                    members["source"] = .string(
                        rule.isScopeOnly
                            ? "scope"
                            : rule.isPattern ? "pattern" : settings.source(ofKey: rule.key).description)
                    if !rule.isPattern, !rule.isScopeOnly, let problem = schemaProblem(rule.key, in: settings)
                    {
                        members["schemaProblem"] = .string(problem)
                    }
                    return .object(members)
                })
        ]
    }

    /// Why the user's stored value of `key` breaks the schema as it is now (a maximum lowered
    /// below it, a type changed), or nil. Such a value is still stored and read, until changed.
    static func schemaProblem(_ key: String, in settings: Settings) -> String? {
        guard let value = settings.storedValue(forKey: key),
            let rule = settings.policy.schema.rule(forKey: key),
            settings.policy.lock(forKey: key) == nil
        else { return nil }
        do throws(SettingsError) {
            try rule.check(value, forKey: key)
            return nil
        } catch {
            return error.message
        }
    }

    /// A rule in the schema file's own form, plus its key and file.
    static func json(of rule: SchemaRule) -> JSONValue {
        guard !rule.isScopeOnly else {
            var members: [String: JSONValue] = [
                "key": .string(rule.key), "scope": .string(rule.scope.rawValue), "file": .string(rule.file),
                "scopeOnly": .bool(true),
            ]
            if let summary = rule.summary { members["summary"] = .string(summary) }
            if let description = rule.description { members["description"] = .string(description) }
            return .object(members)
        }
        var members: [String: JSONValue] = [
            "key": .string(rule.key), "type": .string(rule.type.rawValue),
            "scope": .string(rule.scope.rawValue),
            "file": .string(rule.file),
        ]
        if let type = rule.gvariantType { members["gvariant"] = .string(type.description) }
        if rule.isSecret { members["secret"] = .bool(true) }
        if let value = rule.defaultValue { members["default"] = value.json }
        if let minimum = rule.minimum { members["min"] = .double(minimum) }
        if let maximum = rule.maximum { members["max"] = .double(maximum) }
        if let choices = rule.choices { members["choices"] = .array(choices.map { .string($0) }) }
        if let length = rule.maximumLength { members["maxLength"] = .integer(Int64(length)) }
        if let summary = rule.summary { members["summary"] = .string(summary) }
        if let description = rule.description { members["description"] = .string(description) }
        return .object(members)
    }
}
