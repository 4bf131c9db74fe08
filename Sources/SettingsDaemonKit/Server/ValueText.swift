import SettingsGNOME
package import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value written as text, as `settingsd set KEY VALUE` takes it: read as the type asked for
/// (`--type`), or, when none is, as the type the key's schema declares, else as the type of the
/// value the key holds (a bool, number, date or data stays one), else as a string. The daemon
/// reads a `set` of `text` with it, so the command line needs one round trip and every path
/// types a key alike.
package enum ValueText {
    /// The type names `--type` takes.
    package static let types = ["bool", "int", "double", "string", "json", "data", "date", "gvariant"]

    /// The type name that reads a value of a schema type: `any` reads a string; arrays and
    /// dictionaries read JSON.
    package static func type(forSchemaType declared: String) -> String {
        switch declared {
        case "bool", "int", "double", "string", "data", "date": declared
        case "any": "string"
        default: "json"
        }
    }

    /// `text` read as the type `settings`' schemas declare for `key`: GSettings-typed arrays,
    /// dictionaries, bytes and variants as GVariant text (as `gsettings set` reads them).
    package static func parse(_ text: String, forKey key: String, in settings: Settings) throws(SettingsError)
        -> SettingValue
    {
        try parse(
            text, forKey: key, rule: settings.policy.schema.rule(forKey: key),
            stored: settings.storedValue(forKey: key))
    }

    /// `text` read as `rule` types `key`, else as the type of `stored`, the value the key holds
    /// (what `parse(_:forKey:in:)` reads with the store's own rule and value).
    package static func parse(_ text: String, forKey key: String, rule: SchemaRule?, stored: SettingValue?)
        throws(SettingsError) -> SettingValue
    {
        guard let rule else {
            return try parse(text, keepingTypeOf: stored, forKey: key)
        }
        let type = Self.type(forSchemaType: rule.type.rawValue)
        if let gvariant = rule.gvariantType, !["bool", "int", "double", "string"].contains(type) {
            do throws(SettingsError) {
                return try GVariant(parsing: text, type: gvariant).settingValue()
            } catch {
                throw SettingsError(
                    .invalidValue, "'\(key)' takes GVariant text of type '\(gvariant)': \(error.message)",
                    key: key)
            }
        }
        do throws(SettingsError) {
            return try parse(text, type: type)
        } catch {
            throw SettingsError(error.code, "'\(key)': \(error.message)", key: key)
        }
    }

    /// `text` read as the type of `stored`, the value a key no schema types holds: a string,
    /// array or dictionary (or nothing) takes the text as a string; a bool, number, date or data
    /// keeps its type, and text that does not read as it is refused with the way to change it.
    private static func parse(_ text: String, keepingTypeOf stored: SettingValue?, forKey key: String)
        throws(SettingsError) -> SettingValue
    {
        let type: String
        switch stored {
        case .bool?: type = "bool"
        case .integer?: type = "int"
        case .double?: type = "double"
        case .date?: type = "date"
        case .data?: type = "data"
        default: return .string(text)
        }
        do throws(SettingsError) {
            return try parse(text, type: type)
        } catch {
            throw SettingsError(
                .invalidValue,
                "'\(key)' holds a \(type == "int" ? "64-bit integer" : type), kept when no --type is given: \(error.message); give --type to store another type",
                key: key)
        }
    }

    /// `text` read as `type` (one of `types`).
    package static func parse(_ text: String, type: String) throws(SettingsError) -> SettingValue {
        switch type {
        case "string":
            return .string(text)
        case "bool":
            switch text.lowercased() {
            case "true", "yes", "on", "1": return .bool(true)
            case "false", "no", "off", "0": return .bool(false)
            default: throw invalid("'\(text)' is not a bool (true/false, yes/no, on/off, 1/0)")
            }
        case "int":
            guard let value = Int64(text) else { throw invalid("'\(text)' is not a 64-bit integer") }
            return .integer(value)
        case "double":
            guard let value = Double(text) else { throw invalid("'\(text)' is not a number") }
            // `inf` and `nan` may be asked for by name; a finite number too large for a double may not.
            let named = text.lowercased().drop { $0 == "-" || $0 == "+" }
            guard value.isFinite || ["inf", "infinity", "nan"].contains(named) else {
                throw invalid("'\(text)' is out of the range of a double")
            }
            return .double(value)
        case "json":
            do throws(SettingsError) {
                return try SettingValue(jsonText: text)
            } catch {
                throw invalid("VALUE is not valid JSON for a setting: \(error.message)")
            }
        case "gvariant":
            do throws(SettingsError) {
                return try GVariant(parsing: text).untypedSettingValue()
            } catch {
                throw invalid("VALUE is not GVariant text: \(error.message)")
            }
        case "data":
            guard let data = Data(base64Encoded: text) else { throw invalid("'\(text)' is not base64") }
            return .data(data)
        case "date":
            if let seconds = Double(text), seconds.isFinite {
                return .date(Date(timeIntervalSince1970: seconds))
            }
            if let seconds = ISO8601.parse(text) { return .date(Date(timeIntervalSince1970: seconds)) }
            throw invalid(
                "'\(text)' is not a date (ISO 8601 like 2026-11-29T13:40:00Z, or seconds since 1970)")
        default:
            throw invalid("unknown type '\(type)'; use one of \(types.joined(separator: ", "))")
        }
    }

    private static func invalid(_ message: String) -> SettingsError {
        SettingsError(.invalidValue, message)
    }
}
