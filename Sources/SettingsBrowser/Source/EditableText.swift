import SettingsDaemonKit
import SettingsGNOME
package import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value as the text the edit line shows, and that text read back, as `settingsd set` reads a
/// VALUE: typed by the key's schema (GVariant text for GSettings' arrays and tuples, JSON for
/// other arrays and dictionaries), else by the type of the value the key holds, arrays and
/// dictionaries as JSON.
package enum EditableText {
    /// The text the edit line starts with for `value` of a key `rule` types.
    package static func text(of value: SettingValue?, rule: SchemaRule?) -> String {
        guard let value else { return "" }
        if let gvariant = rule?.gvariantType, let kind = rule?.type.kind,
            ![.bool, .integer, .double, .string].contains(kind),
            let typed = try? GVariant(value, type: gvariant)
        {
            return typed.text(annotated: false)
        }
        switch value {
        case .string(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .double(let number): return String(number)
        case .date(let date): return ISO8601.format(secondsSince1970: date.timeIntervalSince1970)
        case .data(let data): return data.base64EncodedString()
        default: return value.json.serialized()
        }
    }

    /// `text` read as a new value of `key`, which `rule` types and which holds `current`.
    ///
    /// - Throws: `invalidValue` saying what the text should be.
    package static func value(of text: String, forKey key: String, rule: SchemaRule?, current: SettingValue?)
        throws(SettingsError) -> SettingValue
    {
        guard rule == nil, let current, current.kind == .array || current.kind == .dictionary else {
            return try ValueText.parse(text, forKey: key, rule: rule, stored: current)
        }
        do throws(SettingsError) {
            return try ValueText.parse(text, type: "json")
        } catch {
            throw SettingsError(
                .invalidValue, "'\(key)' holds an \(current.kind), edited as JSON: \(error.message)", key: key
            )
        }
    }
}
