import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `import --format dconf` and `export --format dconf`: dconf dump's keyfiles, typed by the
/// daemon's schemas (GSettings' among them).
enum DconfCommands {
    /// `settingsd export --format dconf [DIR] [FILE]`.
    static func export(_ arguments: ParsedArguments, from service: any SettingsService) throws -> Int32 {
        let positionals = try arguments.positionals(0...2)
        let dir = positionals.count == 2 ? positionals[0] : "/"
        let file = positionals.last ?? "-"
        let document = try service.export(at: try arguments.value(Options.at))
        let (text, skipped) = try DconfKeyfile.text(
            of: document.values, dir: dir, schema: try schema(of: service))
        try FileIO.write(text, to: file, endingLine: false)
        reportSkipped(skipped)
        return 0
    }

    /// `settingsd import --format dconf [--replace] [DIR] FILE`.
    static func importFile(_ arguments: ParsedArguments, into service: any SettingsService) throws -> Int32 {
        let positionals = try arguments.positionals(1...2)
        let dir = positionals.count == 2 ? positionals[0] : "/"
        let file = positionals[positionals.count - 1]
        let values: [String: SettingValue]
        do throws(SettingsError) {
            guard let text = String(validating: try FileIO.read(file), as: UTF8.self) else {
                throw SettingsError(.invalidValue, "a dconf keyfile is UTF-8 text")
            }
            values = try DconfKeyfile.values(in: text, dir: dir, schema: try schema(of: service))
        } catch {
            throw SettingsError(
                error.code, "'\(file)' cannot be imported: \(error.message)", key: error.key, path: file)
        }
        let replace = arguments.isSet(Options.replace)
        let prefixes = replace ? try replacedPrefixes(dir) : []
        ClientCommands.reportImported(
            try service.importDocument(
                ExportDocument(values: values), replacingExisting: replace, under: prefixes))
        return 0
    }

    /// The key prefixes of the keys under `dir`: its dotted form and, for names with dots in
    /// them, its slashed one (`DconfPath`).
    private static func replacedPrefixes(_ dir: String) throws(SettingsError) -> [String] {
        let prefix = try DconfPath.keyPrefix(forDir: dir)
        return prefix.isEmpty ? [] : Array(Set([prefix, dir]))
    }

    /// The schema rules the daemon (or the database's policy) types keys by.
    private static func schema(of service: any SettingsService) throws(SettingsError) -> SettingsSchema {
        try SettingsSchema(rules: service.schemaEntries().map(\.rule))
    }

    /// `settingsd dconf audit [DIR]`: every key under the mirrored dirs (or DIR) with its scope
    /// and how often it changed in the last day, busiest first, so that volatile keys show.
    static func audit(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = try arguments.positionals(1...2)
        guard positionals[0] == "audit" else {
            throw UsageError("dconf has no action '\(positionals[0])' (audit)", command: "dconf")
        }
        let service = try arguments.service(forWriting: false)
        var dirs: [String] = []
        if positionals.count == 2 {
            let dir = positionals[1].hasSuffix("/") ? positionals[1] : positionals[1] + "/"
            try DconfPath.validateDir(dir)
            dirs = [dir]
        } else {
            dirs = try service.status().dconf?.dirs ?? []
        }
        guard !dirs.isEmpty else {
            throw UsageError(
                "the daemon mirrors no dconf dir: name one (settingsd dconf audit /org/gnome/), or start it with 'settingsd run --dconf /org/gnome/'",
                command: "dconf")
        }
        let schema = try schema(of: service)
        let since = SettingsConfiguration.systemClock() - min(SettingsConfiguration.systemClock(), 86_400_000)
        var changes: [String: Int] = [:]
        var truncated = false
        for prefix in Set(try dirs.flatMap(replacedPrefixes)) {
            for key in try service.list(prefix: prefix, includeValues: false).keys where changes[key] == nil {
                changes[key] = 0
            }
            let query = HistoryQuery(keyOrPrefix: prefix, sinceMilliseconds: since, limit: 100_000)
            let records = try service.history(query)
            truncated = truncated || records.count == 100_000
            for record in records { changes[record.key, default: 0] += 1 }
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
