package import SettingsStore

/// One key as the browser shows it: its effective value, where that comes from, whether it stays
/// on this machine, and the rule that types it.
package struct KeyEntry: Sendable, Equatable {
    /// The key.
    package var key: String
    /// The effective value, or nil.
    package var value: SettingValue?
    /// Where the value comes from.
    package var origin: ValueOrigin
    /// Whether the key stays on this machine (a `local` scope).
    package var isLocal: Bool
    /// The rule that types the key, if one does.
    package var rule: SchemaRule?

    /// An entry.
    package init(
        key: String, value: SettingValue?, origin: ValueOrigin, isLocal: Bool = false, rule: SchemaRule? = nil
    ) {
        self.key = key
        self.value = value
        self.origin = origin
        self.isLocal = isLocal
        self.rule = rule
    }

    /// The value as one line of text: strings quoted, dates in ISO 8601, the rest as JSON.
    package var valueText: String {
        value.map(Self.text) ?? "(unset)"
    }

    /// `value` as one line of text.
    package static func text(_ value: SettingValue) -> String {
        if case .date(let date) = value {
            return ISO8601.format(secondsSince1970: date.timeIntervalSince1970)
        }
        return value.json.serialized()
    }

    /// The value's type name (`string`, `int`, `array`…), or the rule's when unset.
    package var typeName: String {
        if let value {
            let kind = value.kind
            return kind == .integer ? "int" : kind.rawValue
        }
        return rule?.type.rawValue ?? "none"
    }

    /// Whether `query` (lowercased) is in the key's name, its summary or its value's text.
    package func matches(_ query: String) -> Bool {
        key.lowercased().firstRange(of: query) != nil
            || rule?.summary?.lowercased().firstRange(of: query) != nil
            || valueText.lowercased().firstRange(of: query) != nil
    }
}
