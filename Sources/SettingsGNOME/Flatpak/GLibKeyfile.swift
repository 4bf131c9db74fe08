package import SettingsStore

/// A keyfile in GLib's syntax (`GKeyFile`), as GSettings' keyfile backend keeps an app's settings
/// (`~/.var/app/APP_ID/config/glib-2.0/settings/keyfile`): `[group]` lines, `key=value` lines,
/// comments and blank lines. Every line is kept as it was read, so a keyfile nothing changed
/// writes back byte for byte, and a change touches only its own line: a new key goes at the end
/// of its group, a new group at the end of the file, as `g_key_file_set_value` puts them.
///
/// The backend's group is a settings path without its outer slashes (`/org/gnome/TextEditor/`
/// is `[org/gnome/TextEditor]`), its keys the key names, and its values GVariant text.
package struct GLibKeyfile: Equatable, Sendable {
    /// One line, as read.
    enum Line: Equatable, Sendable {
        /// Blank, or a comment (`#` first).
        case other(String)
        /// `[name]`.
        case group(String, raw: String)
        /// `key=value`.
        case entry(key: String, value: String, raw: String)

        var raw: String {
            switch self {
            case .other(let raw), .group(_, let raw), .entry(_, _, let raw): raw
            }
        }
    }

    /// The lines, in order.
    private(set) var lines: [Line]
    /// Whether the text ended with a line break.
    private let endsWithNewline: Bool

    /// The largest keyfile read: GLib reads any size, but an app's settings are a few kilobytes.
    package static let maximumBytes = 4 << 20

    /// An empty keyfile.
    package init() {
        lines = []
        endsWithNewline = true
    }

    /// The keyfile `text` holds.
    ///
    /// - Throws: `invalidValue` naming the line of a group line that does not close, a line that
    ///   is neither a group, an entry, a comment nor blank, or an entry before any group.
    package init(text: String) throws(SettingsError) {
        var lines: [Line] = []
        var inGroup = false
        // Lines by their bytes: to `String`, "\r\n" is one character, not a line break after a CR.
        let rawLines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, rawLine) in rawLines.enumerated() {
            if index == rawLines.count - 1, rawLine.isEmpty { break }
            let raw = String(decoding: rawLine, as: UTF8.self)
            // Trailing CR (a file from elsewhere) and spaces mean nothing to GLib.
            var content = rawLine[...]
            while let first = content.first, first == 0x20 || first == 0x09 { content.removeFirst() }
            while let last = content.last, last == 0x20 || last == 0x09 || last == 0x0D {
                content.removeLast()
            }
            let line = String(decoding: content, as: UTF8.self)
            if line.isEmpty || line.hasPrefix("#") {
                lines.append(.other(raw))
            } else if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count >= 3 else {
                    throw Self.invalid(index + 1, "a group line must be [NAME]: \(line.prefix(80))")
                }
                let name = String(line.dropFirst().dropLast())
                guard !name.contains("[") && !name.contains("]") else {
                    throw Self.invalid(index + 1, "a group name may not hold [ or ]: \(line.prefix(80))")
                }
                lines.append(.group(name, raw: raw))
                inGroup = true
            } else if let equals = line.firstIndex(of: "=") {
                let key = String(line[..<equals]).trimmingSpaces
                guard !key.isEmpty else { throw Self.invalid(index + 1, "an entry needs a key before '='") }
                guard inGroup else {
                    throw Self.invalid(index + 1, "the entry '\(key.prefix(80))' is in no group")
                }
                let value = String(line[line.index(after: equals)...]).trimmingSpaces
                lines.append(.entry(key: key, value: value, raw: raw))
            } else {
                throw Self.invalid(
                    index + 1, "not a group, a key=value line or a comment: \(line.prefix(80))")
            }
        }
        self.lines = lines
        endsWithNewline = text.isEmpty || text.hasSuffix("\n")
    }

    /// The keyfile as text: the lines as read, changed lines as GLib writes them.
    package var text: String {
        guard !lines.isEmpty else { return "" }
        return lines.map(\.raw).joined(separator: "\n") + (endsWithNewline ? "\n" : "")
    }

    /// Every entry: its group, key and value text; a key given twice in a group is its last value
    /// (as GLib reads it).
    package var entries: [(group: String, key: String, value: String)] {
        var group = ""
        var result: [(group: String, key: String, value: String)] = []
        var position: [String: Int] = [:]
        for line in lines {
            switch line {
            case .group(let name, _): group = name
            case .entry(let key, let value, _):
                let id = group + "\u{0}" + key
                if let at = position[id] {
                    result[at].value = value
                } else {
                    position[id] = result.count
                    result.append((group, key, value))
                }
            case .other: break
            }
        }
        return result
    }

    /// The value text of `key` in `group`, if it has one.
    package func value(group: String, key: String) -> String? {
        entries.last { $0.group == group && $0.key == key }?.value
    }

    /// Sets `key` in `group` to `value` (GVariant text): its line is rewritten where it is; a new
    /// key goes after the last entry of its group, a new group at the end.
    package mutating func set(_ value: String, group: String, key: String) {
        let line = Line.entry(key: key, value: value, raw: "\(key)=\(value)")
        let indices = entryIndices(group: group, key: key)
        if let last = indices.last {
            lines[last] = line
            for index in indices.dropLast().reversed() { lines.remove(at: index) }
            return
        }
        if let groupLine = lines.lastIndex(where: { if case .group(group, _) = $0 { true } else { false } }) {
            var end = groupLine
            for index in (groupLine + 1)..<lines.count {
                if case .group = lines[index] { break }
                if case .entry = lines[index] { end = index }
            }
            lines.insert(line, at: end + 1)
            return
        }
        if !lines.isEmpty, lines.last.map({ $0 == .other("") }) == false { lines.append(.other("")) }
        lines.append(.group(group, raw: "[\(group)]"))
        lines.append(line)
    }

    /// Removes `key` from `group` (the group line stays, as GLib leaves it).
    package mutating func remove(group: String, key: String) {
        for index in entryIndices(group: group, key: key).reversed() { lines.remove(at: index) }
    }

    /// The positions of `key`'s lines in `group`.
    private func entryIndices(group: String, key: String) -> [Int] {
        var current: String?
        var indices: [Int] = []
        for (index, line) in lines.enumerated() {
            switch line {
            case .group(let name, _): current = name
            case .entry(key, _, _) where current == group: indices.append(index)
            default: break
            }
        }
        return indices
    }

    private static func invalid(_ line: Int, _ message: String) -> SettingsError {
        SettingsError(.invalidValue, "line \(line): \(message)")
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
