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
            guard case .string(let key)? = entry["rule"]?["key"] else { continue }
            let scope = entry["rule"]?["scope"] == "local" ? SchemaRule.Scope.local : .synced
            var file = ""
            if case .string(let name)? = entry["rule"]?["file"] { file = name }
            if entry["rule"]?["scopeOnly"] == .bool(true) {
                var rule = SchemaRule(key: key, type: .any, scope: scope, file: file)
                rule.isScopeOnly = true
                try? schema.add(rule)
                continue
            }
            guard case .string(let typeName)? = entry["rule"]?["type"],
                let type = SchemaRule.ValueType(rawValue: typeName)
            else { continue }
            var rule = SchemaRule(key: key, type: type, scope: scope, file: file)
            if case .string(let gvariant)? = entry["rule"]?["gvariant"] {
                rule.gvariantType = try? GVariantType(gvariant)
            }
            try? schema.add(rule)
        }
        return schema
    }

    /// `settingsd dconf audit [DIR]`: every key under the mirrored dirs (or DIR) with its scope
    /// and how often it changed in the last day, busiest first, so that volatile keys show.
    static func audit(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = try arguments.positionals(1...2)
        guard positionals[0] == "audit" else {
            throw UsageError("dconf has no action '\(positionals[0])' (audit)", command: "dconf")
        }
        let target = try arguments.requestTarget(forWriting: false)
        var dirs: [String] = []
        if positionals.count == 2 {
            let dir = positionals[1].hasSuffix("/") ? positionals[1] : positionals[1] + "/"
            try DconfPath.validateDir(dir)
            dirs = [dir]
        } else if case .array(let mirrored)? = try target.request(.status)["dconf"]?["dirs"] {
            dirs = mirrored.compactMap { if case .string(let dir) = $0 { dir } else { nil } }
        }
        guard !dirs.isEmpty else {
            throw UsageError(
                "the daemon mirrors no dconf dir: name one (settingsd dconf audit /org/gnome/), or start it with 'settingsd run --dconf /org/gnome/'",
                command: "dconf")
        }
        let schema = try schema(of: target)
        let since = SettingsConfiguration.systemClock() - min(SettingsConfiguration.systemClock(), 86_400_000)
        var changes: [String: Int] = [:]
        var truncated = false
        for prefix in Set(try dirs.flatMap(replacedPrefixes)) {
            if case .array(let keys)? = try target.request(.list(prefix: prefix, includeValues: false))[
                "keys"]
            {
                for case .string(let key) in keys where changes[key] == nil { changes[key] = 0 }
            }
            let query = HistoryQuery(keyOrPrefix: prefix, sinceMilliseconds: since, limit: 100_000)
            guard case .array(let records)? = try target.request(.history(query))["records"] else { continue }
            truncated = truncated || records.count == 100_000
            for case .string(let key)? in records.map({ $0["key"] }) { changes[key, default: 0] += 1 }
        }
        let rows = changes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        if arguments.isSet(Options.json) {
            Output.line(
                JSONValue.array(
                    rows.map { key, count in
                        .object([
                            "key": .string(key), "changesLastDay": .integer(Int64(count)),
                            "scope": .string(schema.scope(forKey: key).rawValue),
                            "scopeFile": schema.scopeRule(forKey: key).map { .string($0.file) } ?? .null,
                        ])
                    }
                ).serialized())
            return 0
        }
        Output.line("changes/24h  scope   key")
        for (key, count) in rows {
            let scope = schema.scope(forKey: key)
            let rule = schema.scopeRule(forKey: key).map { "  (\($0.key), \($0.file))" } ?? ""
            let padded = String(repeating: " ", count: max(0, 11 - String(count).count)) + String(count)
            let name = scope.rawValue + String(repeating: " ", count: max(0, 6 - scope.rawValue.count))
            Output.line("\(padded)  \(name)  \(key)\(rule)")
        }
        if truncated {
            Output.standardError("more than 100000 changes in the last day: counts are partial\n")
        }
        Output.standardError(
            "a key that changes all day, or belongs to this machine, can stay here: add {\"KEY\": {\"scope\": \"local\"}} to a schema file (docs/SCHEMA.md)\n"
        )
        return 0
    }

    private static func reportSkipped(_ skipped: [(key: String, reason: String)]) {
        guard !skipped.isEmpty else { return }
        Output.standardError("skipped \(skipped.count) key(s) that dconf's format cannot hold:\n")
        for (key, reason) in skipped { Output.standardError("  \(key): \(reason)\n") }
    }
}
