import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#endif

/// The types `set --type` reads a VALUE as.
enum ValueTypeName: String, CaseIterable, Sendable {
    case bool, int, double, string, json, data, date, gvariant
}

/// The formats `export` writes and `import` reads.
enum DocumentFormat: String, CaseIterable, Sendable {
    case json, dconf
}

/// Turns a command-line VALUE into a typed value, as `set --type` asks.
enum ValueParser {
    static let types = ValueTypeName.allCases.map(\.rawValue)

    /// The `--type` that reads a value of a schema type: `any` reads a string, as for a key no
    /// schema declares (`--type` or `--json` say otherwise); arrays and dictionaries read JSON.
    static func type(forSchemaType declared: String) -> String {
        switch declared {
        case "bool", "int", "double", "string", "data", "date": declared
        case "any": "string"
        default: "json"
        }
    }

    static func parse(_ text: String, type: String) throws(UsageError) -> SettingValue {
        switch type {
        case "string":
            return .string(text)
        case "bool":
            switch text.lowercased() {
            case "true", "yes", "on", "1": return .bool(true)
            case "false", "no", "off", "0": return .bool(false)
            default:
                throw UsageError("'\(text)' is not a bool (true/false, yes/no, on/off, 1/0)", command: "set")
            }
        case "int":
            guard let value = Int64(text) else {
                throw UsageError("'\(text)' is not a 64-bit integer", command: "set")
            }
            return .integer(value)
        case "double":
            guard let value = Double(text) else {
                throw UsageError("'\(text)' is not a number", command: "set")
            }
            // `inf` and `nan` may be asked for by name; a finite number too large for a double may not.
            let named = text.lowercased().drop { $0 == "-" || $0 == "+" }
            guard value.isFinite || ["inf", "infinity", "nan"].contains(named) else {
                throw UsageError("'\(text)' is out of the range of a double", command: "set")
            }
            return .double(value)
        case "json":
            do throws(SettingsError) {
                return try SettingValue(jsonText: text)
            } catch {
                throw UsageError("VALUE is not valid JSON for a setting: \(error.message)", command: "set")
            }
        case "gvariant":
            do throws(SettingsError) {
                return try GVariant(parsing: text).untypedSettingValue()
            } catch {
                throw UsageError("VALUE is not GVariant text: \(error.message)", command: "set")
            }
        case "data":
            guard let data = Data(base64Encoded: text) else {
                throw UsageError("'\(text)' is not base64", command: "set")
            }
            return .data(data)
        case "date":
            if let seconds = Double(text), seconds.isFinite {
                return .date(Date(timeIntervalSince1970: seconds))
            }
            if let seconds = ISO8601.parse(text) { return .date(Date(timeIntervalSince1970: seconds)) }
            throw UsageError(
                "'\(text)' is not a date (ISO 8601 like 2026-11-29T13:40:00Z, or seconds since 1970)",
                command: "set")
        default:
            throw UsageError(
                "unknown type '\(type)'; use one of \(types.joined(separator: ", "))", command: "set")
        }
    }
}
