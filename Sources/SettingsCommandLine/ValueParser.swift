import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// The types `set --type` reads a VALUE as.
enum ValueTypeName: String, CaseIterable, Sendable {
    case bool, int, double, string, json, data, date, gvariant
}

/// The formats `export` writes and `import` reads.
enum DocumentFormat: String, CaseIterable, Sendable {
    case json, dconf
}

/// Turns a command-line VALUE into a typed value, as `set --type` asks (`ValueText`, which
/// the daemon reads a `set` of text with too).
enum ValueParser {
    static let types = ValueText.types

    static func parse(_ text: String, type: String) throws(UsageError) -> SettingValue {
        do throws(SettingsError) {
            return try ValueText.parse(text, type: type)
        } catch {
            throw UsageError(error.message, command: "set")
        }
    }
}
