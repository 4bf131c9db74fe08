import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to stdout and stderr without Foundation (it would double the CLI's start-up time).
enum Output {
    /// Writes `text` and a newline to stdout, flushed so pipes see each line at once.
    static func line(_ text: String) {
        var line = text + "\n"
        line.withUTF8 { writeAll(STDOUT_FILENO, $0) }
    }

    /// Writes `text` to stdout as it is.
    static func text(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(STDOUT_FILENO, $0) }
    }

    /// A number as people write it: `60`, not `60.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Writes `Error: message` to stderr.
    static func error(_ message: String) {
        var line = "Error: \(message)\n"
        line.withUTF8 { writeAll(STDERR_FILENO, $0) }
    }

    /// Writes raw text to stderr.
    static func standardError(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(STDERR_FILENO, $0) }
    }

    /// How `get` shows a value to people: strings raw, dates in ISO 8601, the rest as JSON.
    static func text(of value: SettingValue) -> String {
        if case .string(let text) = value { return text }
        return listed(value)
    }

    /// How `list` and `watch` show a value: on one line, a string quoted and escaped like JSON
    /// (so `"1"` is not `1`), a date in ISO 8601 (what `set --type date` reads), the rest as JSON.
    /// A key as `list` prints it: as it is, or as a JSON string when it could be misread
    /// (`"q.a = b"`: holding ` = `, a quote, white space at either end, or a control character).
    static func listedKey(_ key: String) -> String {
        let ambiguous =
            key.contains(" = ") || key.contains("\"") || key.first?.isWhitespace == true
            || key.last?.isWhitespace == true
            || key.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        return ambiguous ? JSONValue.string(key).serialized() : key
    }

    static func listed(_ value: SettingValue) -> String {
        if case .date(let date) = value {
            return ISO8601.format(secondsSince1970: date.timeIntervalSince1970)
        }
        return value.json.serialized()
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
