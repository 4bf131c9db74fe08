import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// The commands that read and write keys through a daemon (or a database with `--db`).
enum ClientCommands {
    static func get(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let service = try arguments.service(forWriting: false)
        if arguments.isSet(Options.withVersion) { return try getWithVersion(key, service, arguments) }
        // The effective value, layers and all; `--explain` asks where it comes from too.
        let explained = arguments.isSet(Options.explain) ? try service.describe(key) : nil
        let value = if let explained { explained.value } else { try service.value(forKey: key) }
        guard let value else {
            Output.error("'\(key)' is not set")
            return 1
        }
        if arguments.isSet(Options.jsonValue) {
            // The machine form stays one JSON document: with --explain, the value and its source.
            guard let explained else {
                Output.line(value.json.serialized())
                return 0
            }
            var members: [String: JSONValue] = ["value": value.json, "source": .string(explained.source)]
            members["schemaProblem"] = explained.schemaProblem.map { .string($0) }
            if !explained.overrides.isEmpty {
                members["overrides"] = .array(
                    explained.overrides.map {
                        .object(["source": .string($0.source), "value": $0.value?.json ?? .null])
                    })
            }
            Output.line(JSONValue.object(members).serialized())
            return 0
        }
        Output.line(Output.text(of: value))
        if let explained {
            Output.line("from: \(explained.source)")
            for layer in explained.overrides {
                Output.line("overrides: \(layer.source): \(layer.value.map(Output.listed) ?? "unset")")
            }
            if let problem = explained.schemaProblem {
                Output.line("warning: the schema changed since: \(problem)")
            }
        }
        return 0
    }

    /// `get --with-version`: the stored value's version (or `absent`), then the value, from one
    /// answer, so a script can write back with `--if-version` knowing nothing came between.
    private static func getWithVersion(
        _ key: String, _ service: any SettingsService, _ arguments: ParsedArguments
    )
        throws -> Int32
    {
        guard !arguments.isSet(Options.explain) else {
            throw UsageError("--with-version and --explain are separate questions: ask one", command: "get")
        }
        let fields = try service.answer(.getVersioned(key: key))
        if case .string(let version)? = fields["version"] {
            Output.line(version)
        } else {
            Output.line("absent")
        }
        guard let json = fields["value"] else {
            Output.error("'\(key)' is not set")
            return 1
        }
        let value = try SettingValue(json: json)
        Output.line(arguments.isSet(Options.jsonValue) ? value.json.serialized() : Output.text(of: value))
        return 0
    }

    /// The precondition `--if-version` or `--if-absent` asks for.
    private static func precondition(_ arguments: ParsedArguments) throws(UsageError) -> SettingPrecondition?
    {
        arguments.isSet(Options.ifAbsent) ? .absent : try arguments.value(Options.ifVersion)
    }

    static func set(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = try arguments.positionals(2...2)
        let key = try arguments.key(positionals[0])
        let given = arguments.isSet(Options.jsonInput) ? "json" : try arguments.value(Options.type)?.rawValue
        // A value typed on the command line is checked before anything is contacted.
        let parsed = try given.map { type throws(UsageError) in
            try ValueParser.parse(positionals[1], type: type)
        }
        let precondition = try precondition(arguments)
        let service = try arguments.service(forWriting: true)
        guard let parsed else {
            // Without a type, the daemon types the text by the key's schema: one round trip.
            let request = WireRequest.setText(key: key, text: positionals[1], precondition: precondition)
            let answered = Result { () throws(SettingsError) in try service.answer(request) }
            // Text that does not read as the key's type is a mistake on the command line.
            if case .failure(let error) = answered, error.code == .invalidValue {
                throw UsageError(error.message, command: "set")
            }
            _ = try answered.get()
            return 0
        }
        _ = try service.answer(.set(key: key, value: parsed, precondition: precondition))
        return 0
    }

    static func reset(_ arguments: ParsedArguments) throws -> Int32 {
        let all = arguments.isSet(Options.all)
        let key = all ? "" : try arguments.key(try arguments.positionals(1...1)[0])
        if all { _ = try arguments.positionals(0...0) }
        let report = try arguments.service(forWriting: true).reset(key)
        reportSkippedLocked(report)
        if all || key.hasSuffix(".") {
            Output.standardError(
                "reset \(report.count) key(s)\(all ? "" : " under '\(key)'") to their defaults\n")
        }
        return 0
    }

    static func delete(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let precondition = try precondition(arguments)
        _ = try arguments.service(forWriting: true).answer(.delete(key: key, precondition: precondition))
        return 0
    }

    static func list(_ arguments: ParsedArguments) throws -> Int32 {
        let prefix = try arguments.positionals(0...1).first ?? ""
        if arguments.isSet(Options.pretty) && !arguments.isSet(Options.jsonObject) {
            throw UsageError("--pretty goes with --json", command: "list")
        }
        if arguments.isSet(Options.keysOnly) {
            guard !arguments.isSet(Options.jsonObject), !arguments.isSet(Options.schema) else {
                throw UsageError("--keys prints names only: not with --json or --schema", command: "list")
            }
            let listing = try arguments.service(forWriting: false).list(prefix: prefix, includeValues: false)
            for key in listing.keys { Output.line(key) }
            return 0
        }
        if arguments.isSet(Options.builtIn), !arguments.isSet(Options.schema) {
            throw UsageError("--built-in goes with --schema", command: "list")
        }
        if arguments.isSet(Options.schema) { return try listSchema(arguments, prefix: prefix) }
        let listing = try arguments.service(forWriting: false).list(prefix: prefix, includeValues: true)
        let values = listing.values ?? [:]
        if arguments.isSet(Options.jsonObject) {
            Output.line(
                JSONValue.object(values.mapValues(\.json)).serialized(pretty: arguments.isSet(Options.pretty))
            )
            return 0
        }
        for key in listing.keys {
            guard let value = values[key] else { continue }
            let mark = listing.locked.contains(key) ? "  (locked)" : ""
            Output.line("\(Output.listedKey(key)) = \(Output.listed(value))\(mark)")
        }
        return 0
    }

    /// `list --schema`: the declared keys under `prefix` with their effective values.
    private static func listSchema(_ arguments: ParsedArguments, prefix: String) throws -> Int32 {
        let all = try arguments.service(forWriting: false).schemaEntries().filter {
            $0.rule.key.hasPrefix(prefix)
        }
        // The administrator's and the apps' rules first: the built-in ones only when asked for.
        let showsBuiltIn = arguments.isSet(Options.builtIn)
        let entries = showsBuiltIn ? all : all.filter { !$0.rule.file.hasPrefix("(built in)") }
        if entries.count < all.count, !arguments.isSet(Options.jsonObject) {
            Output.standardError(
                "\(all.count - entries.count) built-in rule(s) not shown (--built-in shows them)\n")
        }
        if arguments.isSet(Options.jsonObject) {
            Output.line(
                JSONValue.array(entries.map(\.json)).serialized(pretty: arguments.isSet(Options.pretty)))
            return 0
        }
        for entry in entries {
            let rule = entry.rule
            if rule.isScopeOnly {
                Output.line("\(rule.key) (scope \(rule.scope.rawValue))  [\(rule.file)]")
                continue
            }
            let value = entry.value.map(Output.listed) ?? "unset"
            let scope = rule.scope == .local ? ", local" : ""
            let problem = entry.schemaProblem.map { "  (does not fit the schema now: \($0))" } ?? ""
            Output.line("\(rule.key) (\(rule.type.rawValue)\(scope)) = \(value)  [\(entry.source)]\(problem)")
        }
        return 0
    }

    /// Names, on stderr, the locked keys a whole-store operation left as they are.
    static func reportSkippedLocked(_ report: BulkChangeReport) {
        let keys = report.skippedLocked
        guard !keys.isEmpty else { return }
        Output.standardError(
            "skipped \(keys.count) locked key(s), left as the lock holds them: \(keys.prefix(20).joined(separator: ", "))\(keys.count > 20 ? ", …" : "")\n"
        )
    }

    static func export(_ arguments: ParsedArguments) throws -> Int32 {
        let service = try arguments.service(forWriting: false)
        if try arguments.value(Options.format) == .dconf {
            return try DconfCommands.export(arguments, from: service)
        }
        let file = try arguments.positionals(0...1).first ?? "-"
        let document = try service.export(at: try arguments.value(Options.at))
        try FileIO.write(document.json.serialized(pretty: true), to: file)
        return 0
    }

    static func importDocument(_ arguments: ParsedArguments) throws -> Int32 {
        if try arguments.value(Options.format) == .dconf {
            return try DconfCommands.importFile(arguments, into: arguments.service(forWriting: true))
        }
        let file = try arguments.positionals(1...1)[0]
        let document: ExportDocument
        do throws(SettingsError) {
            document = try ExportDocument(jsonText: FileIO.read(file))
        } catch {
            throw SettingsError(error.code, "'\(file)' cannot be imported: \(error.message)", path: file)
        }
        let report = try arguments.service(forWriting: true).importDocument(
            document, replacingExisting: arguments.isSet(Options.replace))
        reportImported(report)
        return 0
    }

    /// What an import did, on stderr: the locked keys it skipped, and how many values it wrote.
    static func reportImported(_ report: BulkChangeReport) {
        reportSkippedLocked(report)
        Output.standardError("imported \(report.count) value(s)\n")
    }
}
