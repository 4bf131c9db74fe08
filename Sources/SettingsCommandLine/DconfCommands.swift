import SettingsStore

/// `import --format dconf` and `export --format dconf`: dconf dump's keyfiles, typed by the
/// daemon's schemas (GSettings' among them).
enum DconfCommands {
    /// `settingsd export --format dconf [DIR] [FILE]`.
    static func export(_ arguments: ParsedArguments, target: any RequestTarget) throws -> Int32 {
        let positionals = try arguments.positionals(0...2)
        let dir = positionals.count == 2 ? positionals[0] : "/"
        let file = positionals.last ?? "-"
        let at = try arguments.value(Options.at)
        let document = try ExportDocument(
            json: try target.request(at.map { .exportAt(timeMilliseconds: $0) } ?? .export)["document"]
                ?? .null)
        let (text, skipped) = try DconfKeyfile.text(
            of: document.values, dir: dir, schema: try schema(of: target))
        try FileIO.write(text, to: file, endingLine: false)
        reportSkipped(skipped)
        return 0
    }

    /// `settingsd import --format dconf [--replace] [DIR] FILE`.
    static func importFile(_ arguments: ParsedArguments, target: any RequestTarget) throws -> Int32 {
        let positionals = try arguments.positionals(1...2)
        let dir = positionals.count == 2 ? positionals[0] : "/"
        let file = positionals[positionals.count - 1]
        let values: [String: SettingValue]
        do throws(SettingsError) {
            guard let text = String(validating: try FileIO.read(file), as: UTF8.self) else {
                throw SettingsError(.invalidValue, "a dconf keyfile is UTF-8 text")
            }
            values = try DconfKeyfile.values(in: text, dir: dir, schema: try schema(of: target))
        } catch {
            throw SettingsError(
                error.code, "'\(file)' cannot be imported: \(error.message)", key: error.key, path: file)
        }
        let replace = arguments.isSet(Options.replace)
        let prefixes = replace ? try replacedPrefixes(dir) : []
        let fields = try target.importDocument(
            ExportDocument(values: values), replace: replace, under: prefixes)
        ClientCommands.reportSkippedLocked(fields)
        if case .integer(let count)? = fields["imported"] {
            Output.standardError("imported \(count) value(s)\n")
        }
        return 0
    }

    /// The key prefixes of the keys under `dir`: its dotted form and, for names with dots in
    /// them, its slashed one (`DconfPath`).
    private static func replacedPrefixes(_ dir: String) throws(SettingsError) -> [String] {
        let prefix = try DconfPath.keyPrefix(forDir: dir)
        return prefix.isEmpty ? [] : Array(Set([prefix, dir]))
    }

    /// The schema rules the daemon (or the database's policy) types keys by.
    private static func schema(of target: any RequestTarget) throws(SettingsError) -> SettingsSchema {
        guard case .array(let entries)? = try target.request(.schema)["keys"] else { return SettingsSchema() }
        var schema = SettingsSchema()
        for entry in entries {
            guard case .string(let key)? = entry["rule"]?["key"],
                case .string(let typeName)? = entry["rule"]?["type"],
                let type = SchemaRule.ValueType(rawValue: typeName)
            else { continue }
            var rule = SchemaRule(key: key, type: type, file: "")
            if case .string(let gvariant)? = entry["rule"]?["gvariant"] {
                rule.gvariantType = try? GVariantType(gvariant)
            }
            try? schema.add(rule)
        }
        return schema
    }

    private static func reportSkipped(_ skipped: [(key: String, reason: String)]) {
        guard !skipped.isEmpty else { return }
        Output.standardError("skipped \(skipped.count) key(s) that dconf's format cannot hold:\n")
        for (key, reason) in skipped { Output.standardError("  \(key): \(reason)\n") }
    }
}
