package import SettingsStore
import SettingsWire

/// The keys under a prefix (`list`), with the values `get` answers when they were asked for.
package struct KeyListing: Sendable, Equatable {
    /// The keys holding values, sorted.
    package var keys: [String]
    /// The value of each key, when asked for: a locked key shows what its lock holds it to.
    package var values: [String: SettingValue]?
    /// The keys a lock holds, when values were asked for.
    package var locked: Set<String>

    /// The keys under `prefix` in `settings`, with their values if `includeValues`.
    package init(prefix: String, includeValues: Bool, in settings: Settings) {
        keys = settings.keys(withPrefix: prefix)
        locked = []
        guard includeValues else { return }
        var values: [String: SettingValue] = [:]
        let policy = settings.policy
        for key in keys {
            let isLocked = policy.lock(forKey: key) != nil
            if isLocked { locked.insert(key) }
            if let value = isLocked ? settings.value(forKey: key) : settings.storedValue(forKey: key) {
                values[key] = value
            }
        }
        self.values = values
    }
}

extension KeyListing {
    /// The `list` result's fields (see `docs/PROTOCOL.md`).
    package var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["keys": .array(keys.map { .string($0) })]
        fields["values"] = values.map { .object($0.mapValues(\.json)) }
        if !locked.isEmpty { fields["locked"] = .array(locked.sorted().map { .string($0) }) }
        return fields
    }

    /// Reads a `list` result.
    package init(fields: [String: JSONValue]) throws(SettingsError) {
        let members = try JSONFields(.object(fields), what: "a list result")
        keys = try members.strings("keys", limit: .max) ?? []
        locked = Set(try members.strings("locked", limit: .max) ?? [])
        values = try fields["values"].map { json throws(SettingsError) in
            guard case .object(let values) = json else {
                throw SettingsError(.protocolError, "'values' must be an object of key → value")
            }
            var decoded: [String: SettingValue] = [:]
            for (key, value) in values { decoded[key] = try SettingValue(json: value) }
            return decoded
        }
    }
}
