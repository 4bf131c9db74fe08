import SettingsStore

/// One `.gschema.xml` file as GLib's `glib-compile-schemas` reads it: schemas, enums and flags.
struct GSchemaFile: Sendable {
    struct Key: Sendable {
        var name: String
        /// The `type` attribute; nil for an enum or flags key.
        var type: String?
        var enumID: String?
        var flagsID: String?
        var defaultText: String?
        /// Whether the default is translated (`l10n`): settingsd reads it untranslated.
        var isTranslated = false
        var summary: String?
        var description: String?
        var range: (minimum: String?, maximum: String?)?
        var choices: [String]?
        var aliases: [String] = []
        var line: Int
    }

    struct Schema: Sendable {
        var id: String
        var path: String?
        var extends: String?
        var keys: [Key] = []
        var children: [(name: String, schema: String)] = []
        var overrides: [String: String] = [:]
        var line: Int
    }

    var path: String
    var schemas: [Schema] = []
    /// Enum ids → their nicks, in order.
    var enums: [String: [String]] = [:]
    /// Flags ids → their nicks, in order.
    var flags: [String: [String]] = [:]

    /// Reads the file at `path`.
    ///
    /// - Throws: `schemaViolation` naming the file and line for markup that is not a schema list.
    package init(path: String) throws(SettingsError) {
        self.path = path
        let bytes = try FileSystem.read(path, limit: 16 << 20)
        let root: MarkupElement
        do throws(MarkupParser.Failure) {
            root = try MarkupParser.parse(bytes)
        } catch {
            throw SettingsError(.schemaViolation, "\(path):\(error.line): \(error.reason)", path: path)
        }
        guard root.name == "schemalist" else {
            throw SettingsError(
                .schemaViolation, "\(path): the document is <\(root.name)>, not <schemalist>", path: path)
        }
        for element in root.children {
            switch element.name {
            case "enum", "flags":
                guard let id = element.attributes["id"] else {
                    throw problem(element, "<\(element.name)> needs an id")
                }
                let nicks = element.children(named: "value").compactMap { $0.attributes["nick"] }
                if element.name == "enum" { enums[id] = nicks } else { flags[id] = nicks }
            case "schema":
                schemas.append(try schema(element))
            default:
                throw problem(element, "unexpected <\(element.name)> in <schemalist>")
            }
        }
    }

    private func problem(_ element: MarkupElement, _ reason: String) -> SettingsError {
        SettingsError(.schemaViolation, "\(path):\(element.line): \(reason)", path: path)
    }

    private func schema(_ element: MarkupElement) throws(SettingsError) -> Schema {
        guard let id = element.attributes["id"] else { throw problem(element, "<schema> needs an id") }
        var schema = Schema(
            id: id, path: element.attributes["path"], extends: element.attributes["extends"],
            line: element.line)
        if let path = schema.path, !path.hasPrefix("/") || !path.hasSuffix("/") || path.contains("//") {
            throw problem(
                element, "schema \(id): path '\(path)' must start and end with '/' and hold no '//'")
        }
        for child in element.children {
            switch child.name {
            case "key": schema.keys.append(try key(child, schema: id))
            case "child":
                guard let name = child.attributes["name"], let target = child.attributes["schema"] else {
                    throw problem(child, "<child> needs a name and a schema")
                }
                schema.children.append((name, target))
            case "override":
                guard let name = child.attributes["name"] else {
                    throw problem(child, "<override> needs a name")
                }
                schema.overrides[name] = child.text
            default:
                throw problem(child, "unexpected <\(child.name)> in schema \(id)")
            }
        }
        return schema
    }

    private func key(_ element: MarkupElement, schema: String) throws(SettingsError) -> Key {
        guard let name = element.attributes["name"] else {
            throw problem(element, "<key> in schema \(schema) needs a name")
        }
        var key = Key(
            name: name, type: element.attributes["type"], enumID: element.attributes["enum"],
            flagsID: element.attributes["flags"], line: element.line)
        guard [key.type, key.enumID, key.flagsID].compactMap({ $0 }).count == 1 else {
            throw problem(element, "key \(schema).\(name) needs exactly one of type, enum and flags")
        }
        for child in element.children {
            switch child.name {
            case "default":
                key.defaultText = child.text
                key.isTranslated = child.attributes["l10n"] != nil
            case "summary": key.summary = Self.paragraph(child.text)
            case "description": key.description = Self.paragraph(child.text)
            case "range": key.range = (child.attributes["min"], child.attributes["max"])
            case "choices":
                key.choices = child.children(named: "choice").compactMap { $0.attributes["value"] }
            case "aliases": key.aliases = child.children(named: "alias").compactMap { $0.attributes["value"] }
            default:
                throw problem(child, "unexpected <\(child.name)> in key \(schema).\(name)")
            }
        }
        return key
    }

    /// Text with its runs of white space made single spaces, as GSettings shows summaries.
    private static func paragraph(_ text: String) -> String {
        let words = text.utf8.split { $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }
        return String(decoding: Array(words.joined(separator: [0x20])), as: UTF8.self)
    }
}
