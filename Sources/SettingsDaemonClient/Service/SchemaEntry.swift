package import SettingsStore
import SettingsWire

/// One rule of the schemas in force (`schema`), with the effective value of the key it declares.
package struct SchemaEntry: Sendable, Equatable {
    /// The rule: a key's, a pattern's, or one that only sets a scope.
    package var rule: SchemaRule
    /// The declared key's effective value; nil for patterns, scope-only rules and unset keys.
    package var value: SettingValue?
    /// Where the value comes from in words, or `pattern` or `scope` for rules that declare no one key.
    package var source: String
    /// Why the stored value breaks the rule as it is now, if it does.
    package var schemaProblem: String?

    /// Every rule of `settings`' schemas, sorted by key, with the values of the keys they declare.
    package static func all(in settings: Settings) -> [SchemaEntry] {
        let schema = settings.policy.schema
        return (schema.rules + schema.scopeRules).sorted { $0.key < $1.key }.map { rule in
            guard !rule.isScopeOnly, !rule.isPattern else {
                return SchemaEntry(rule: rule, source: rule.isScopeOnly ? "scope" : "pattern")
            }
            return SchemaEntry(
                rule: rule, value: settings.value(forKey: rule.key),
                source: settings.source(ofKey: rule.key).description,
                schemaProblem: KeyDescription.schemaProblem(rule.key, in: settings))
        }
    }

    /// An entry of `rule`.
    package init(rule: SchemaRule, value: SettingValue? = nil, source: String, schemaProblem: String? = nil) {
        self.rule = rule
        self.value = value
        self.source = source
        self.schemaProblem = schemaProblem
    }
}

extension SchemaEntry {
    /// The entry's wire form, one of the `schema` result's `keys` (see `docs/PROTOCOL.md`).
    package var json: JSONValue {
        var members: [String: JSONValue] = ["rule": rule.json, "source": .string(source)]
        members["value"] = value?.json
        members["schemaProblem"] = schemaProblem.map { .string($0) }
        return .object(members)
    }

    /// The `schema` result's fields for `entries`.
    package static func fields(of entries: [SchemaEntry]) -> [String: JSONValue] {
        ["keys": .array(entries.map(\.json))]
    }

    /// Reads a `schema` result.
    package static func entries(in fields: [String: JSONValue]) throws(SettingsError) -> [SchemaEntry] {
        let members = try JSONFields(.object(fields), what: "a schema result")
        return try members.array("keys", limit: .max).map { json throws(SettingsError) in
            let entry = try JSONFields(json, what: "each of 'keys'")
            guard let rule = entry.members["rule"] else {
                throw SettingsError(.protocolError, "each of 'keys' needs its 'rule'")
            }
            return SchemaEntry(
                rule: try SchemaRule(json: rule),
                value: try entry.members["value"].map { json throws(SettingsError) in
                    try SettingValue(json: json)
                },
                source: try entry.string("source"), schemaProblem: try entry.optionalString("schemaProblem"))
        }
    }
}
