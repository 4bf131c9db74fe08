package import SettingsStore

/// dconf's keyfile format, as `dconf dump DIR` writes it and `dconf load DIR` reads it:
/// `[group/under/DIR]` lines, then `key=GVariant text`, a group `[/]` for the keys of DIR itself.
///
/// Values are typed by the schema where it types the key (`GVariantType` of the rule), else by
/// their text: an annotated value keeps its type (`uint32 7` comes back as `uint32 7`).
package enum DconfKeyfile {
    /// One `key=value` line: the dconf key path it names and its GVariant text.
    package struct Entry: Sendable, Equatable {
        /// The dconf key path (`/org/gnome/desktop/interface/gtk-theme`).
        package var path: String
        /// The value's GVariant text.
        package var text: String
        /// The line it is on.
        package var line: Int
    }

    /// The entries of `text`, a keyfile loaded at `dir`; a key given twice keeps its last value.
    ///
    /// - Throws: `invalidValue` naming the line of anything that is not a group, a `key=value`
    ///   line, a comment or blank, and of a key that makes no dconf path.
    package static func entries(in text: String, dir: String) throws(SettingsError) -> [Entry] {
        try DconfPath.validateDir(dir)
        var entries: [Entry] = []
        var index: [String: Int] = [:]
        var group: String?
        var lineNumber = 0
        let bytes = Array(text.utf8)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        func trimmed(_ slice: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var slice = slice
            while let first = slice.first, isSpace(first) { slice.removeFirst() }
            while let last = slice.last, isSpace(last) { slice.removeLast() }
            return slice
        }
        // Bytes, not characters: a dump of GNOME's settings has thousands of lines.
        for rawLine in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = trimmed(rawLine)
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            func problem(_ reason: String) -> SettingsError {
                SettingsError(.invalidValue, "line \(lineNumber): \(reason)")
            }
            if line.first == UInt8(ascii: "[") {
                guard line.last == UInt8(ascii: "]") else {
                    throw problem("a group starts with '[' and ends with ']'")
                }
                let name = String(decoding: line.dropFirst().dropLast(), as: UTF8.self)
                guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "[")),
                    !name.utf8.contains(UInt8(ascii: "]"))
                else {
                    throw problem("'\(name)' is not a group name")
                }
                group = name
                continue
            }
            guard let group else { throw problem("a key=value line before any [group]") }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw problem("not a key=value line, a [group] or a # comment")
            }
            let name = String(decoding: trimmed(line[..<equals]), as: UTF8.self)
            let value = String(decoding: trimmed(line[(equals + 1)...]), as: UTF8.self)
            guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "/")) else {
                throw problem("'\(name)' is not a key name")
            }
            let path = dir + (group == "/" ? "" : group + "/") + name
            do throws(SettingsError) {
                try DconfPath.validateKey(path)
            } catch {
                throw problem("\(error.message): \(path)")
            }
            let entry = Entry(path: path, text: value, line: lineNumber)
            if let earlier = index[path] {
                entries[earlier] = entry
            } else {
                index[path] = entries.count
                entries.append(entry)
            }
        }
        return entries
    }

    /// The values of `text` loaded at `dir`, by settingsd key, typed by `schema`.
    ///
    /// - Throws: `invalidValue` naming the line and key of a value that is not GVariant text,
    ///   or not of the type its schema gives the key; nothing is returned unless all are read.
    package static func values(in text: String, dir: String, schema: SettingsSchema) throws(SettingsError)
        -> [String: SettingValue]
    {
        var values: [String: SettingValue] = [:]
        for entry in try entries(in: text, dir: dir) {
            let key = try DconfPath.key(forPath: entry.path)
            do throws(SettingsError) {
                if let type = schema.rule(forKey: key)?.gvariantType {
                    values[key] = try GVariant(parsing: entry.text, type: type).settingValue()
                } else {
                    values[key] = try GVariant(parsing: entry.text).untypedSettingValue()
                }
            } catch {
                throw SettingsError(.invalidValue, "line \(entry.line): \(key): \(error.message)", key: key)
            }
        }
        return values
    }

    /// `values` (by settingsd key) under `dir` as `dconf dump dir` would print them, with the
    /// keys that cannot be written (a date, a name a keyfile cannot hold) and why.
    package static func text(of values: [String: SettingValue], dir: String, schema: SettingsSchema)
        throws(SettingsError) -> (text: String, skipped: [(key: String, reason: String)])
    {
        try DconfPath.validateDir(dir)
        final class Folder {
            var keys: [String: String] = [:]
            var folders: [String: Folder] = [:]
        }
        let root = Folder()
        var skipped: [(key: String, reason: String)] = []
        for (key, value) in values {
            do throws(SettingsError) {
                let path = try DconfPath.path(forKey: key)
                guard path.hasPrefix(dir) else { continue }
                var names = path.dropFirst(dir.count).split(separator: "/").map(String.init)
                let name = names.removeLast()
                guard isKeyfileName(name), names.allSatisfy(isKeyfileName) else {
                    skipped.append((key, "a keyfile cannot hold its name"))
                    continue
                }
                let variant =
                    if let type = schema.rule(forKey: key)?.gvariantType {
                        try GVariant(value, type: type)
                    } else {
                        try GVariant(untyped: value)
                    }
                var folder = root
                for part in names {
                    if let next = folder.folders[part] {
                        folder = next
                    } else {
                        let next = Folder()
                        folder.folders[part] = next
                        folder = next
                    }
                }
                folder.keys[name] = variant.text
            } catch {
                skipped.append((key, error.message))
            }
        }
        // As dconf walks: a folder's keys in byte order, then its folders by "name/".
        var groups: [String] = []
        func walk(_ folder: Folder, group: String) {
            if !folder.keys.isEmpty {
                let lines = folder.keys.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                    .map { "\($0.key)=\($0.value)\n" }
                groups.append("[\(group)]\n" + lines.joined())
            }
            for (name, child) in folder.folders.sorted(by: {
                ($0.key + "/").utf8.lexicographicallyPrecedes(($1.key + "/").utf8)
            }) {
                walk(child, group: group == "/" ? name : "\(group)/\(name)")
            }
        }
        walk(root, group: "/")
        return (groups.joined(separator: "\n"), skipped.sorted { $0.key < $1.key })
    }

    /// Whether GLib's keyfile writer takes `name` as a key or a group part.
    private static func isKeyfileName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("=") && !name.contains("[") && !name.contains("]")
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
            && name.first != " " && name.last != " "
    }
}
