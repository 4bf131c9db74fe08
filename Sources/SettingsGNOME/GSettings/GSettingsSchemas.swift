package import SettingsStore

/// GSettings schema files (`*.gschema.xml`, with `*.gschema.override` vendor defaults) read as
/// settingsd rules, with every part that could not be kept reported (see `docs/SCHEMA.md`).
///
/// A key is named by its schema's dconf path (`org.gnome.system.proxy` lives at
/// `/system/proxy/`, so its `mode` is `system.proxy.mode`). A relocatable schema (no path)
/// becomes patterns: its keys at any depth under the path of the schema its id extends
/// (`…media-keys.custom-keybinding` under `…media-keys`'s path:
/// `org.gnome.settings-daemon.plugins.media-keys.*.binding`), and exact keys where a `<child>`
/// places it.
package struct GSettingsSchemas: Sendable {
    /// Something a schema says that settingsd does not keep, or a file it could not read.
    package struct Note: Sendable, Equatable, CustomStringConvertible {
        /// The schema file.
        package let file: String
        /// The key the note is about, or nil for the whole file.
        package let key: String?
        /// What was not kept, and why.
        package let message: String

        /// `FILE: KEY: MESSAGE`.
        package var description: String { "\(file): " + (key.map { "\($0): " } ?? "") + message }
    }

    /// The rules, one per key (or pattern) of every schema.
    package private(set) var rules: [SchemaRule] = []
    /// What was not kept, key by key.
    package private(set) var notes: [Note] = []
    /// Schemas placed at a path so far (`placementBudget`).
    private var placements = 0
    /// Files that could not be read at all (skipped, the others still load).
    package private(set) var failedFiles: [Note] = []

    private var schemas: [String: GSchemaFile.Schema] = [:]
    private var files: [String: String] = [:]
    private var enums: [String: [String]] = [:]
    private var flags: [String: [String]] = [:]
    private var vendorDefaults: [String: [String: (text: String, file: String)]] = [:]

    /// The `*.gschema.xml`, `*.enums.xml` and `*.gschema.override` files of `directories`, by name, a schema id
    /// from an earlier folder hiding the same id in a later one (as `$XDG_DATA_DIRS` orders them).
    package init(directories: [String]) {
        var schemaFiles: [String] = []
        var overrideFiles: [String] = []
        for directory in directories {
            guard let listing = try? FileSystem.regularFiles(in: directory) else { continue }
            for name in listing.names {
                // Enums usually come in files of their own, made by glib-mkenums.
                if name.hasSuffix(".gschema.xml") || name.hasSuffix(".enums.xml") {
                    schemaFiles.append("\(directory)/\(name)")
                }
                if name.hasSuffix(".gschema.override") { overrideFiles.append("\(directory)/\(name)") }
            }
        }
        self.init(schemaFiles: schemaFiles, overrideFiles: overrideFiles)
    }

    /// The rules of `schemaFiles`, with the vendor defaults of `overrideFiles` (later win).
    package init(schemaFiles: [String], overrideFiles: [String] = []) {
        for file in schemaFiles {
            do throws(SettingsError) {
                let parsed = try GSchemaFile(path: file)
                enums.merge(parsed.enums) { first, _ in first }
                flags.merge(parsed.flags) { first, _ in first }
                for schema in parsed.schemas {
                    if let earlier = files[schema.id] {
                        if earlier != file { continue }
                        notes.append(
                            Note(
                                file: file, key: nil,
                                message: "schema \(schema.id) is declared twice; the first is kept"))
                        continue
                    }
                    schemas[schema.id] = schema
                    files[schema.id] = file
                }
            } catch {
                failedFiles.append(Note(file: file, key: nil, message: error.message))
            }
        }
        for file in overrideFiles.sorted(by: {
            $0.split(separator: "/").last ?? "" < $1.split(separator: "/").last ?? ""
        }) {
            readOverrides(file)
        }
        for id in schemas.keys.sorted() {
            guard let schema = schemas[id] else { continue }
            if let path = schema.path {
                place(schema, at: path, depth: 0, within: [])
            } else {
                placeRelocatable(schema)
            }
        }
    }

    // MARK: Placing keys

    /// The keys of `schema` (and what it extends) with their overrides applied.
    private func keys(of schema: GSchemaFile.Schema, depth: Int = 0) -> [(GSchemaFile.Key, String?)] {
        var keys: [String: GSchemaFile.Key] = [:]
        var order: [String] = []
        if let parentID = schema.extends, depth < 16, let parent = schemas[parentID] {
            for (key, _) in self.keys(of: parent, depth: depth + 1) {
                keys[key.name] = key
                order.append(key.name)
            }
        }
        for key in schema.keys {
            if keys[key.name] == nil { order.append(key.name) }
            keys[key.name] = key
        }
        return order.compactMap { name in
            keys[name].map { ($0, schema.overrides[name] ?? vendorDefaults[schema.id]?[name]?.text) }
        }
    }

    /// The most schemas placed at a path, all files together: GLib lets a relocatable schema
    /// hold itself as a child (so paths go on for ever), and children that each hold their
    /// parent multiply with every level.
    static let placementBudget = 20_000

    /// Places `schema`'s keys at `path`, then its relocatable children under it. A child that is
    /// already among its ancestors (`within`) is a cycle: noted and not followed.
    private mutating func place(
        _ schema: GSchemaFile.Schema, at path: String, depth: Int, within ancestors: Set<String>
    ) {
        let file = files[schema.id] ?? ""
        placements += 1
        guard placements <= Self.placementBudget else {
            if placements == Self.placementBudget + 1 {
                notes.append(
                    Note(
                        file: file, key: nil,
                        message:
                            "more than \(Self.placementBudget) schema placements: the rest of schema \(schema.id)'s children are not typed"
                    ))
            }
            return
        }
        let prefix: String
        do throws(SettingsError) {
            prefix = try DconfPath.keyPrefix(forDir: path)
        } catch {
            notes.append(Note(file: file, key: nil, message: "schema \(schema.id): \(error.message)"))
            return
        }
        for (key, override) in keys(of: schema) {
            addRule(for: key, named: prefix + key.name, override: override, schema: schema.id, file: file)
        }
        guard depth < 16 else { return }
        for (name, childID) in schema.children {
            guard let child = schemas[childID] else {
                notes.append(
                    Note(
                        file: file, key: nil,
                        message: "schema \(schema.id): child schema \(childID) is not installed"))
                continue
            }
            // A child with a path of its own is placed there; a relocatable one lives under its parent.
            guard child.path == nil else { continue }
            guard !ancestors.contains(childID), childID != schema.id else {
                notes.append(
                    Note(
                        file: file, key: nil,
                        message:
                            "schema \(schema.id): child \(name) is schema \(childID) again, at \(path + name)/: a cycle, not followed (its keys there are not typed)"
                    ))
                continue
            }
            place(child, at: path + name + "/", depth: depth + 1, within: ancestors.union([schema.id]))
        }
    }

    private mutating func placeRelocatable(_ schema: GSchemaFile.Schema) {
        let file = files[schema.id] ?? ""
        var base = schema.id
        var parts = schema.id.split(separator: ".")
        while parts.count > 1 {
            parts.removeLast()
            if let path = schemas[parts.joined(separator: ".")]?.path,
                let prefix = try? DconfPath.keyPrefix(forDir: path), !prefix.hasPrefix("/")
            {
                base = String(prefix.dropLast())
                break
            }
        }
        for (key, override) in keys(of: schema) {
            addRule(
                for: key, named: "\(base).*.\(key.name)", override: override, schema: schema.id, file: file)
        }
    }

    // MARK: Rules

    private mutating func addRule(
        for key: GSchemaFile.Key, named name: String, override: String?, schema: String, file: String
    ) {
        func note(_ message: String) { notes.append(Note(file: file, key: name, message: message)) }
        var choices = key.choices
        let type: GVariantType
        do throws(SettingsError) {
            if let enumID = key.enumID {
                guard let nicks = enums[enumID] else {
                    return note("enum \(enumID) is not declared; key skipped")
                }
                type = .string
                choices = nicks
            } else if let flagsID = key.flagsID {
                guard let nicks = flags[flagsID] else {
                    return note("flags \(flagsID) are not declared; key skipped")
                }
                type = .array(.string)
                choices = nicks
            } else {
                type = try GVariantType(key.type ?? "")
            }
        } catch {
            return note("type '\(key.type ?? "")' is not a GVariant type settingsd reads; key skipped")
        }
        var rule = SchemaRule(
            key: name, type: type.valueType, choices: choices, summary: key.summary,
            description: key.description, file: file)
        rule.gvariantType = type
        if let range = key.range {
            rule.minimum = bound(range.minimum, type: type, note: note)
            rule.maximum = bound(range.maximum, type: type, note: note)
        }
        if "\(type)".contains("t") {
            note("uint64 values above \(Int64.max) cannot be stored")
        }
        if key.isTranslated {
            note("the default is translated by GSettings; settingsd reads it untranslated")
        }
        if !key.aliases.isEmpty {
            note(
                "aliases (\(key.aliases.joined(separator: ", "))) are not applied: only the choices are accepted"
            )
        }
        if let text = override ?? key.defaultText {
            do throws(SettingsError) {
                let value = try GVariant(parsing: text, type: type).settingValue()
                try rule.check(value, forKey: name)
                rule.defaultValue = value
            } catch {
                note("the default \(text) is not kept: \(error.message)")
            }
        }
        rules.append(rule)
    }

    private func bound(_ text: String?, type: GVariantType, note: (String) -> Void) -> Double? {
        guard let text else { return nil }
        do throws(SettingsError) {
            switch try GVariant(parsing: text, type: type).settingValue() {
            case .integer(let integer): return Double(integer)
            case .double(let double): return double
            default:
                note("a range on a \(type) is not kept")
                return nil
            }
        } catch {
            note("the range bound \(text) is not kept: \(error.message)")
            return nil
        }
    }

    /// A vendor override file: `[schema.id]` groups of `key=GVariant text`.
    private mutating func readOverrides(_ file: String) {
        guard let bytes = try? FileSystem.read(file, limit: 16 << 20) else {
            failedFiles.append(Note(file: file, key: nil, message: "cannot be read"))
            return
        }
        var group: String?
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let text = line.trimmingWhitespace
            if text.isEmpty || text.hasPrefix("#") { continue }
            if text.hasPrefix("["), text.hasSuffix("]") {
                group = String(text.dropFirst().dropLast())
                if let group, group.contains(":") {
                    notes.append(
                        Note(
                            file: file, key: nil,
                            message: "desktop-specific overrides [\(group)] are not applied"))
                }
                continue
            }
            guard let group, !group.contains(":"), let equals = text.firstIndex(of: "=") else { continue }
            let name = String(text[..<equals]).trimmingWhitespace
            vendorDefaults[group, default: [:]][name] = (
                String(text[text.index(after: equals)...]).trimmingWhitespace, file
            )
        }
    }
}

extension StringProtocol {
    /// The text without white space at either end.
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
