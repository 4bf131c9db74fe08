package import SettingsStore

/// The schemas Flatpak apps ship, as rules of their keys under `flatpak.APP_ID.` (the schema's
/// path as a key: `flatpak.org.gnome.TextEditor.org.gnome.TextEditor.style-scheme`), each with
/// its GVariant type, range or choices, default, summary and description, read from the app's
/// `gschemas.compiled` through GIO. A daemon run with `--flatpak` reads them with every policy.
package struct FlatpakSchemaSource: SchemaSource {
    /// Where the apps are.
    package let layout: FlatpakLayout
    /// The apps bridged.
    package let apps: [String]

    /// The schemas of `apps` in `layout`.
    package init(layout: FlatpakLayout, apps: [String]) {
        self.layout = layout
        self.apps = apps
    }

    /// The store key prefix of `app`'s keys.
    package static func prefix(of app: String) -> String {
        "flatpak." + app + "."
    }

    package func rules(in directories: [String]) -> (rules: [SchemaRule], warnings: [String]) {
        var rules: [SchemaRule] = []
        var warnings: [String] = []
        for app in apps {
            guard let folder = layout.schemaFolder(app) else { continue }
            do throws(SettingsError) {
                for schema in try CompiledSchemas(directory: folder).schemas {
                    guard let path = schema.path else { continue }
                    for key in schema.keys {
                        do throws(SettingsError) {
                            rules.append(
                                try Self.rule(key, path: path, app: app, file: folder + "/gschemas.compiled"))
                        } catch {
                            warnings.append("\(app): \(schema.id) key \(key.name) skipped: \(error.message)")
                        }
                    }
                }
            } catch {
                warnings.append("\(app): \(error.message)")
            }
        }
        return (rules, warnings)
    }

    /// The rule of one compiled key at `path` of `app`.
    static func rule(_ key: CompiledSchemas.Key, path: String, app: String, file: String)
        throws(SettingsError)
        -> SchemaRule
    {
        let type = try GVariantType(key.type)
        let name = BridgeKeys(prefix: prefix(of: app)).key(forPath: path + key.name)
        guard let name else { throw SettingsError(.invalidKey, "\(path)\(key.name) is not a dconf key path") }
        var rule = SchemaRule(
            key: name, type: type.valueType, summary: key.summary, description: key.description, file: file)
        rule.gvariantType = type
        // GLib prints the range as ('type', <…>), ('enum', <[nicks]>), ('flags', <[nicks]>) or
        // ('range', <(minimum, maximum)>).
        if case .tuple(let members) = try GVariant(parsing: key.rangeText, type: try GVariantType("(sv)")),
            members.count == 2, case .string(let kind) = members[0], case .variant(let detail) = members[1]
        {
            switch (kind, detail) {
            case ("enum", .array(_, let nicks)), ("flags", .array(_, let nicks)):
                rule.choices = nicks.compactMap { if case .string(let nick) = $0 { nick } else { nil } }
            case ("range", .tuple(let bounds)) where bounds.count == 2:
                rule.minimum = Self.number(bounds[0])
                rule.maximum = Self.number(bounds[1])
            default: break
            }
        }
        let value = try GVariant(parsing: key.defaultText, type: type).settingValue()
        try rule.check(value, forKey: name)
        rule.defaultValue = value
        return rule
    }

    private static func number(_ value: GVariant) -> Double? {
        switch try? value.settingValue() {
        case .integer(let integer)?: Double(integer)
        case .double(let double)?: double
        default: nil
        }
    }
}
