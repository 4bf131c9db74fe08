package import SettingsStore
import SettingsWire

/// Everything a replica knows about one key (`describe`): the rule that types it, the rule that
/// sets its scope, its lock, its system default, and its effective value with where that comes from.
package struct KeyDescription: Sendable, Equatable {
    /// The key, in its stored form (NFC).
    package var key: String
    /// The effective value (`get`'s), or nil when the key has none.
    package var value: SettingValue?
    /// Where the value comes from, in words (`user`, `system default in …`, `unset`, …).
    package var source: String
    /// The rule that types the key: its own, or a pattern's.
    package var rule: SchemaRule?
    /// Whether the key syncs, as the most specific rule decides.
    package var scope: SchemaRule.Scope
    /// The scope-only rule that decides the scope, if one does.
    package var scopeRule: SchemaRule?
    /// Why the stored value breaks the schema as it is now, if it does.
    package var schemaProblem: String?
    /// What locks the key, if anything does: the `locks.d` file, or the hub's mandatory policy.
    package var lockedBy: String?
    /// The layers the effective value overrides, in order: where each comes from, and its value.
    package var overrides: [Layer] = []

    /// One layer that holds a value for the key.
    package struct Layer: Sendable, Equatable {
        /// Where it comes from, in words.
        package var source: String
        /// Its value (nil: a lock that pins nothing).
        package var value: SettingValue?
    }
    /// The system default and the `defaults.d` file that sets it, if one does.
    package var systemDefault: SettingsPolicy.SystemDefault?

    /// Describes `key` as `settings` holds it now.
    package init(_ key: String, in settings: Settings) {
        let policy = settings.policy
        self.key = key
        value = settings.value(forKey: key)
        source = settings.source(ofKey: key).description
        rule = policy.schema.rule(forKey: key)
        scope = policy.schema.scope(forKey: key)
        scopeRule = policy.schema.scopeRule(forKey: key)
        schemaProblem = Self.schemaProblem(key, in: settings)
        lockedBy = policy.locker(ofKey: key)
        systemDefault = policy.systemDefaults[key]
        overrides = settings.layers(ofKey: key).dropFirst().map {
            Layer(source: $0.source.description, value: $0.value)
        }
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
}

extension KeyDescription {
    /// The `describe` result's fields (see `docs/PROTOCOL.md`).
    package var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "key": .string(key), "source": .string(source), "scope": .string(scope.rawValue),
        ]
        fields["value"] = value?.json
        fields["schema"] = rule?.json
        fields["scopeRule"] = scopeRule?.json
        fields["schemaProblem"] = schemaProblem.map { .string($0) }
        fields["lockedBy"] = lockedBy.map { .string($0) }
        if !overrides.isEmpty {
            fields["overrides"] = .array(
                overrides.map { .object(["source": .string($0.source), "value": $0.value?.json ?? .null]) })
        }
        fields["writable"] = .bool(lockedBy == nil)
        if let systemDefault {
            fields["systemDefault"] = systemDefault.value.json
            fields["systemDefaultFile"] = .string(systemDefault.file)
        }
        return fields
    }

    /// Reads a `describe` result.
    package init(fields: [String: JSONValue]) throws(SettingsError) {
        let members = try JSONFields(.object(fields), what: "a describe result")
        key = try members.string("key")
        source = try members.string("source")
        value = try fields["value"].map { json throws(SettingsError) in try SettingValue(json: json) }
        rule = try fields["schema"].map { json throws(SettingsError) in try SchemaRule(json: json) }
        scopeRule = try fields["scopeRule"].map { json throws(SettingsError) in try SchemaRule(json: json) }
        let scopeName = try members.optionalString("scope") ?? rule?.scope.rawValue ?? "synced"
        guard let scope = SchemaRule.Scope(rawValue: scopeName) else {
            throw SettingsError(.protocolError, "'\(scopeName)' is not a scope (synced or local)", key: key)
        }
        self.scope = scope
        schemaProblem = try members.optionalString("schemaProblem")
        lockedBy = try members.optionalString("lockedBy")
        overrides = try (members.optionalArray("overrides") ?? []).map { (json) throws(SettingsError) in
            let layer = try JSONFields(json, what: "an overridden layer")
            let value = layer.members["value"].flatMap { $0 == .null ? nil : $0 }
            return Layer(
                source: try layer.string("source"),
                value: try value.map { (json) throws(SettingsError) in try SettingValue(json: json) })
        }
        systemDefault = try fields["systemDefault"].map { json throws(SettingsError) in
            SettingsPolicy.SystemDefault(
                value: try SettingValue(json: json), file: try members.string("systemDefaultFile"))
        }
    }
}
