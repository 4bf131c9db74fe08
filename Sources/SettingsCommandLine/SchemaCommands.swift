import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#endif

/// `settingsd schema swift FILE` (typed keys for an app) and `settingsd schema check FILE`.
enum SchemaCommands {
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        if arguments.isSet(Options.store) {
            guard try arguments.positionals(1...1) == ["check"] else {
                throw UsageError("--store goes with 'schema check' and no FILE", command: "schema")
            }
            return try checkStore(arguments)
        }
        let positionals = try arguments.positionals(2...3)
        let file = positionals[1]
        if positionals[0] == "import-dconf-db" {
            return try importDconfDatabase(
                file, into: positionals.count == 3 ? positionals[2] : SettingsPolicy.defaultSystemDirectory)
        }
        guard positionals.count == 2 else {
            throw UsageError("schema \(positionals[0]) takes one FILE", command: "schema")
        }
        if isGSettings(file) { return try checkGSettings(file, action: positionals[0]) }
        let rules = try SettingsSchema(rules: SettingsSchema.rules(inFile: file, extensions: .gnome)).rules
        switch positionals[0] {
        case "swift":
            Output.line(swiftSource(for: rules, file: file))
        case "check":
            Output.standardError("\(file): \(rules.count) rule(s), valid\n")
        case let action:
            throw UsageError(
                "schema has no action '\(action)' (check, swift or import-dconf-db)", command: "schema")
        }
        return 0
    }

    /// `schema check --store`: the stored values that break the schemas in force, one a line.
    private static func checkStore(_ arguments: ParsedArguments) throws -> Int32 {
        let broken = try arguments.service(forWriting: false).schemaEntries().compactMap(\.schemaProblem)
        for problem in broken { Output.line(problem) }
        Output.standardError(
            broken.isEmpty
                ? "every stored value fits the schemas\n"
                : "\(broken.count) stored value(s) do not fit the schemas now\n")
        return broken.isEmpty ? 0 : 1
    }

    /// Whether `file` is GSettings' (a `.gschema.xml` file, or a folder of them).
    private static func isGSettings(_ file: String) -> Bool {
        file.hasSuffix(".gschema.xml") || FileIO.isDirectory(file)
    }

    /// `schema check` and `schema swift` of a `.gschema.xml` file (with the enums beside it) or
    /// a folder of them: every loss reported, key by key.
    private static func checkGSettings(_ file: String, action: String) throws -> Int32 {
        let schemas: GSettingsSchemas
        if FileIO.isDirectory(file) {
            schemas = GSettingsSchemas(directories: [file])
        } else {
            let folder = file.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
                separator: "/")
            let enums = (FileIO.names(in: folder.isEmpty ? "." : folder) ?? []).filter {
                $0.hasSuffix(".enums.xml")
            }
            .map { (folder.isEmpty ? "" : folder + "/") + $0 }
            schemas = GSettingsSchemas(schemaFiles: [file] + enums)
        }
        if let failure = schemas.failedFiles.first {
            throw SettingsError(.schemaViolation, failure.description)
        }
        let rules = try SettingsSchema(rules: schemas.rules).rules
        switch action {
        case "swift":
            Output.line(swiftSource(for: rules, file: file))
        case "check":
            let lossy = Set(schemas.notes.compactMap(\.key))
            Output.standardError(
                "\(file): \(rules.count) rule(s): \(rules.count - lossy.count) kept exactly, \(lossy.count) with a loss\n"
            )
            for note in schemas.notes { Output.standardError("  \(note)\n") }
        case let action:
            throw UsageError(
                "schema has no action '\(action)' (check, swift or import-dconf-db)", command: "schema")
        }
        return 0
    }

    /// `schema import-dconf-db DIR [SYSTEM-DIR]`: a site's dconf keyfiles and locks as
    /// `defaults.d` and `locks.d` files, typed by the installed schemas.
    private static func importDconfDatabase(_ directory: String, into system: String) throws -> Int32 {
        let policy = try SettingsPolicy.load(
            schemaDirectories: SettingsPolicy.defaultSchemaDirectories, systemDirectory: nil,
            extensions: .gnome)
        let database = try DconfSystemDatabase(directory: directory, schema: policy.schema)
        let trimmed = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var name = String(trimmed.split(separator: "/").last ?? "db")
        if name.hasSuffix(".d") { name.removeLast(2) }
        let defaults = "\(system)/defaults.d/60-dconf-\(name).json"
        let locks = "\(system)/locks.d/60-dconf-\(name)"
        try FileIO.makeDirectory("\(system)/defaults.d")
        try FileIO.makeDirectory("\(system)/locks.d")
        let members = database.defaults.mapValues(\.json)
        // Read by every user's daemon: world-readable, as /etc/dconf's files are.
        try FileIO.write(JSONValue.object(members).serialized(pretty: true), to: defaults, mode: 0o644)
        let header = "# From the dconf database \(directory) (settingsd schema import-dconf-db)\n"
        try FileIO.write(header + database.locks.joined(separator: "\n"), to: locks, mode: 0o644)
        for note in database.notes { Output.standardError("note: \(note)\n") }
        Output.standardError(
            "wrote \(database.defaults.count) default(s) to \(defaults) and \(database.locks.count) lock(s) to \(locks)\n"
        )
        return 0
    }

    /// `extension SettingKeys { static let … = SettingKey<…>(…, default: …) }` for `rules`.
    static func swiftSource(for rules: [SchemaRule], file: String) -> String {
        var lines = [
            "// Generated by `settingsd schema swift \(file)`; regenerate instead of editing.",
            "import Foundation", "import SettingsStore", "", "extension SettingKeys {",
        ]
        var used: Set<String> = []
        for rule in rules.sorted(by: { $0.key < $1.key }) {
            guard !rule.isPattern else {
                lines.append(
                    "    // \(rule.key): a pattern (\(rule.type.rawValue)); declare its keys as you need them."
                )
                continue
            }
            // Keys that differ only in punctuation (ui.font_size, ui.fontSize) would collide.
            var name = identifier(rule.key)
            if used.contains(name) {
                lines.append("    // \(name) is taken: '\(rule.key)' gets a numbered name.")
                var number = 2
                while used.contains(numbered(name, number)) { number += 1 }
                name = numbered(name, number)
            }
            used.insert(name)
            let summary = (rule.summary ?? "").split(whereSeparator: \.isNewline).map { "    /// \($0)" }
            if rule.type == .string, let choices = rule.choices, !choices.isEmpty {
                lines += choiceKey(rule, choices: choices, name: name, summary: summary)
                continue
            }
            lines += summary
            let type = swiftType(rule.type)
            if let value = rule.defaultValue {
                lines.append(
                    "    static let \(name) = SettingKey<\(type)>(\(literal(.string(rule.key))), default: \(literal(value, as: rule.type)))"
                )
            } else {
                lines.append(
                    "    static let \(name) = SettingKey<\(type)?>(\(literal(.string(rule.key))))"
                )
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// A string key with `choices` as an enum of them and a key of that enum: a typo in a
    /// choice is a compile error, not a value the schema refuses.
    private static func choiceKey(_ rule: SchemaRule, choices: [String], name: String, summary: [String])
        -> [String]
    {
        let bare = name.hasPrefix("`") ? String(name.dropFirst().dropLast()) : name
        let type = bare.prefix(1).uppercased() + bare.dropFirst()
        var cases: [String] = []
        var used: Set<String> = []
        for choice in choices {
            var label = identifier(choice)
            while used.contains(label) { label = "_" + label }
            used.insert(label)
            let bareLabel = label.hasPrefix("`") ? String(label.dropFirst().dropLast()) : label
            cases.append(
                bareLabel == choice ? "case \(label)" : "case \(label) = \(literal(.string(choice)))")
        }
        var lines = [
            "    /// The choices of '\(rule.key)'.",
            "    enum \(type): String, SettingValueConvertible, CaseIterable, Sendable {",
        ]
        lines += cases.map { "        \($0)" }
        lines.append("    }")
        lines += summary
        if case .string(let value)? = rule.defaultValue, let index = choices.firstIndex(of: value) {
            let label = identifierOfCase(cases[index])
            lines.append(
                "    static let \(name) = SettingKey<\(type)>(\(literal(.string(rule.key))), default: .\(label))"
            )
        } else {
            lines.append("    static let \(name) = SettingKey<\(type)?>(\(literal(.string(rule.key))))")
        }
        return lines
    }

    /// The label of a generated `case label` or `case label = "raw"` line.
    private static func identifierOfCase(_ line: String) -> String {
        String(line.dropFirst("case ".count).prefix { $0 != " " })
    }

    /// `name` with `number` after it, outside backticks.
    private static func numbered(_ name: String, _ number: Int) -> String {
        name.hasPrefix("`") ? String(name.dropFirst().dropLast()) + "\(number)" : name + "\(number)"
    }

    private static func swiftType(_ type: SchemaRule.ValueType) -> String {
        switch type.kind {
        case .bool: "Bool"
        case .integer: "Int"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .array: "[SettingValue]"
        case .dictionary: "[String: SettingValue]"
        case nil: "SettingValue"
        }
    }

    /// A Swift expression for `value`, typed as the rule's type asks: inside an array, a
    /// dictionary or a key of any type the expression is a `SettingValue`.
    private static func literal(_ value: SettingValue, as type: SchemaRule.ValueType? = nil) -> String {
        let nested = type == nil || type == .any
        switch value {
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return type == .double ? "\(number).0" : "\(number)"
        case .double(let number):
            guard number.isFinite else {
                let name = number.isNaN ? "nan" : "infinity"
                let sign = number < 0 && !number.isNaN ? "-" : ""
                return nested ? ".double(\(sign).\(name))" : "\(sign)Double.\(name)"
            }
            let text = "\(number)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .string(let text):
            let escaped = text.unicodeScalars.map { scalar -> String in
                switch scalar {
                case "\"": "\\\""
                case "\\": "\\\\"
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default:
                    scalar.value < 0x20 || scalar.value == 0x7F
                        ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
                }
            }.joined()
            return "\"\(escaped)\""
        case .data(let data):
            let expression = "Data(base64Encoded: \"\(data.base64EncodedString())\") ?? Data()"
            return nested ? ".data(\(expression))" : expression
        case .date(let date):
            let expression =
                "Date(timeIntervalSince1970: \(literal(.double(date.timeIntervalSince1970), as: .double)))"
            return nested ? ".date(\(expression))" : expression
        case .array(let elements):
            return "[" + elements.map { literal($0) }.joined(separator: ", ") + "]"
        case .dictionary(let members):
            guard !members.isEmpty else { return "[:]" }
            return "["
                + members.sorted { $0.key < $1.key }.map {
                    "\(literal(.string($0.key))): \(literal($0.value))"
                }
                .joined(separator: ", ") + "]"
        }
    }

    /// `audio.volume` → `audioVolume`; keywords in backticks, a leading digit behind `_`.
    static func identifier(_ key: String) -> String {
        let words = key.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        guard let first = words.first else { return "_" }
        var name = first.prefix(1).lowercased() + first.dropFirst()
        for word in words.dropFirst() { name += word.prefix(1).uppercased() + word.dropFirst() }
        if name.first?.isNumber == true { name = "_" + name }
        let keywords: Set<String> = [
            "default", "class", "struct", "enum", "protocol", "extension", "func", "var", "let", "if", "else",
            "for", "while", "repeat", "switch", "case", "return", "import", "static", "self", "Self", "true",
            "false", "nil", "in", "is", "as", "try", "throw", "throws", "init", "deinit", "subscript",
            "operator",
            "public", "private", "internal", "fileprivate", "open", "where", "guard", "defer", "do", "catch",
            "break", "continue", "fallthrough", "inout", "super", "associatedtype", "typealias",
        ]
        return keywords.contains(name) ? "`\(name)`" : name
    }
}
