#if canImport(Glibc)
    import Glibc
#endif

/// Reading a policy from its folders: schema files, `defaults.d` and `locks.d`.
extension SettingsPolicy {
    /// The folders schema files are read from by default: `$GSETTINGS_SCHEMA_DIR`, then for
    /// each data folder (`$XDG_DATA_HOME`, else `$HOME/.local/share` when `$HOME` is this user's
    /// own folder, as the database's; then `$XDG_DATA_DIRS`, `/usr/local/share` and
    /// `/usr/share` when unset) its `settingsd/schemas` and `glib-2.0/schemas`. (A `$HOME` owned
    /// by another user, as under `setpriv` or `sudo`, is left out: its schemas are not ours.)
    public static var defaultSchemaDirectories: [String] {
        let home = variable("XDG_DATA_HOME") ?? variable("HOME").flatMap(ownedDataHome)
        let shared = (variable("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(
            String.init)
        let gsettings =
            variable("GSETTINGS_SCHEMA_DIR").map { $0.split(separator: ":").map(String.init) } ?? []
        return gsettings
            + ([home].compactMap { $0 } + shared).flatMap {
                ["\($0)/settingsd/schemas", "\($0)/glib-2.0/schemas"]
            }
    }

    /// `home`'s `.local/share` when `home` is this user's own folder.
    private static func ownedDataHome(_ home: String) -> String? {
        var status = stat()
        guard stat(home, &status) == 0, status.st_uid == getuid() else { return nil }
        return home + "/.local/share"
    }

    /// The environment variable `name`, nil when unset or empty.
    private static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The folder of system defaults and locks by default: `$SETTINGSD_SYSTEM_DIR`, else
    /// `/etc/settingsd`. Every process follows it (the daemon, the command line, embedded stores
    /// and `SettingsDefaults`), so an administrator can try defaults and locks without root.
    public static var defaultSystemDirectory: String {
        variable("SETTINGSD_SYSTEM_DIR") ?? "/etc/settingsd"
    }

    /// Reads every `*.json` schema in `schemaDirectories` (in order, files by name),
    /// `systemDirectory/defaults.d/*.json` (in file-name order, later files win) and
    /// `systemDirectory/locks.d/*`. Missing folders are empty.
    ///
    /// - Throws: `schemaViolation` naming the file for a malformed schema, a key declared with two
    ///   types, or a system default that breaks its schema; `invalidValue` for a malformed
    ///   defaults file; `io` for a file that cannot be read.
    public static func load(
        schemaDirectories: [String], systemDirectory: String?, isStrict: Bool = false,
        extensions: SchemaExtensions = .none
    ) throws(SettingsError) -> SettingsPolicy {
        var policy = SettingsPolicy()
        policy.isStrict = isStrict
        // First, so that every schema file may say otherwise.
        for rule in extensions.builtInRules { try policy.schema.add(rule) }
        for directory in schemaDirectories {
            let listing = try FileSystem.regularFiles(in: directory, endingWith: ".json")
            policy.skip(listing.skipped)
            for name in listing.names {
                for rule in try SettingsSchema.rules(inFile: "\(directory)/\(name)", extensions: extensions) {
                    try policy.schema.add(rule)
                }
            }
        }
        // Other formats' files are not settingsd's: one that cannot be read, or a key a settingsd
        // schema already types otherwise, is skipped with a warning instead of stopping the daemon.
        for source in extensions.sources {
            let (rules, warnings) = source.rules(in: schemaDirectories)
            policy.warnings += warnings
            for rule in rules {
                do throws(SettingsError) {
                    try policy.schema.add(rule)
                } catch {
                    policy.warnings.append("skipped \(rule.file) key: \(error.message)")
                }
            }
        }
        guard let systemDirectory else { return policy }
        let defaults = "\(systemDirectory)/defaults.d"
        let defaultFiles = try FileSystem.regularFiles(in: defaults, endingWith: ".json")
        policy.skip(defaultFiles.skipped)
        for name in defaultFiles.names {
            let file = "\(defaults)/\(name)"
            for (key, value) in try readDefaults(at: file) {
                if let rule = policy.schema.rule(forKey: key) {
                    do throws(SettingsError) {
                        try rule.check(value, forKey: key)
                    } catch {
                        throw SettingsError(
                            .schemaViolation, "\(file): \(error.message)", key: key, path: file)
                    }
                }
                policy.systemDefaults[key] = SystemDefault(value: value, file: file)
            }
        }
        let lockFolder = "\(systemDirectory)/locks.d"
        // Built whole, then set once: the lock index is made when the list is set.
        var locks: [Lock] = []
        let lockFiles = try FileSystem.regularFiles(in: lockFolder)
        policy.skip(lockFiles.skipped)
        for name in lockFiles.names {
            let file = "\(lockFolder)/\(name)"
            let text = String(decoding: try FileSystem.read(file, limit: 1 << 20), as: UTF8.self)
            for line in text.split(whereSeparator: \.isNewline) {
                let entry = String(
                    line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                        .drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
                guard !entry.isEmpty else { continue }
                locks.append(Lock(key: KeyIdentity.normalize(entry), file: file))
            }
        }
        policy.locks = locks
        return policy
    }

    /// The rules of one schema file: `{"format": "settingsd-schema", "version": 1, "keys": {...}}`.
    static func readSchema(at file: String, extensions: SchemaExtensions = .none) throws(SettingsError)
        -> [SchemaRule]
    {
        try SettingsSchema.rules(inFile: file, extensions: extensions)
    }
}

extension SettingsSchema {
    /// The rules of one schema file (see `docs/SCHEMA.md`).
    ///
    /// - Throws: `schemaViolation` naming the file and what is wrong with it; `io` when it
    ///   cannot be read.
    package static func rules(inFile file: String, extensions: SchemaExtensions = .none) throws(SettingsError)
        -> [SchemaRule]
    {
        try rules(
            in: { () throws(SettingsError) in try FileSystem.read(file, limit: 16 << 20) }, file: file,
            extensions: extensions)
    }

    /// The rules of a schema file's `bytes`, named `file` in errors and rules.
    package static func rules(
        in bytes: () throws(SettingsError) -> [UInt8], file: String, extensions: SchemaExtensions = .none
    ) throws(SettingsError) -> [SchemaRule] {
        do throws(SettingsError) {
            let fields = try JSONFields(try JSONValue.parse(try bytes()), what: "a schema file")
            guard try fields.string("format") == "settingsd-schema" else {
                throw SettingsError(.schemaViolation, "field 'format' must be \"settingsd-schema\"")
            }
            guard try fields.integer("version") == 1 else {
                throw SettingsError(.schemaViolation, "field 'version' must be 1")
            }
            if let unknown = fields.members.dictionary.keys.sorted().first(where: {
                !["format", "version", "keys"].contains($0)
            }) {
                throw SettingsError(
                    .schemaViolation,
                    "unknown field '\(unknown)' (a schema file has format, version and keys)")
            }
            guard case .object(let keys)? = fields.members["keys"] else {
                throw SettingsError(.schemaViolation, "field 'keys' must be an object of key → rule")
            }
            return try keys.sorted { $0.key < $1.key }.map { (key, json) throws(SettingsError) in
                try SettingsPolicy.rule(key: key, json: json, file: file, extensions: extensions)
            }
        } catch {
            guard error.path == nil else { throw error }
            throw SettingsError(
                .schemaViolation, "schema \(file): \(error.message)", key: error.key, path: file)
        }
    }

}

extension SettingsPolicy {
    /// A rule with a scope and no type: it sets the scope of the keys it covers, whatever types them.
    private static func scopeRule(key: String, fields: JSONFields, file: String) throws(SettingsError)
        -> SchemaRule
    {
        if let other = fields.members.dictionary.keys.sorted().first(where: {
            !["scope", "summary", "description"].contains($0)
        }) {
            throw SettingsError(
                .schemaViolation,
                "'\(key)': a rule without a type sets only a scope (with a summary and description), not '\(other)'",
                key: key)
        }
        guard let scope = SchemaRule.Scope(rawValue: try fields.optionalString("scope") ?? "") else {
            throw SettingsError(.schemaViolation, "'\(key)': scope must be synced or local", key: key)
        }
        let name = key.hasSuffix(".*") ? key : KeyIdentity.normalize(key)
        try KeyValidation.validate(
            key.hasSuffix(".*") ? String(key.dropLast()) + "x" : name, maximumBytes: 1024)
        var rule = SchemaRule(
            key: name, type: .any, summary: try fields.optionalString("summary"),
            description: try fields.optionalString("description"), scope: scope, file: file)
        rule.isScopeOnly = true
        return rule
    }

    /// The rule for `key` in a schema file's form. A rule a daemon already holds (`trusted`, read
    /// back from the wire) is taken as it is; one read from a file is refused when it is impossible
    /// or its default breaks it.
    static func rule(
        key: String, json: JSONValue, file: String, trusted: Bool = false,
        extensions: SchemaExtensions = .none
    ) throws(SettingsError) -> SchemaRule {
        let fields = try JSONFields(json, what: "the rule for '\(key)'")
        if let unknown = fields.members.dictionary.keys.sorted().first(where: {
            !SchemaRule.fieldNames.contains($0)
        }) {
            throw SettingsError(
                .schemaViolation,
                "'\(key)': unknown field '\(unknown)' (a rule has \(SchemaRule.fieldNames.sorted().joined(separator: ", ")))",
                key: key)
        }
        let native = try nativeType(of: key, in: fields, trusted: trusted, extensions: extensions)
        let typeName = try fields.optionalString("type") ?? native?.valueType.rawValue
        if typeName == nil, fields.members["scope"] != nil {
            return try scopeRule(key: key, fields: fields, file: file)
        }
        guard let typeName else {
            throw SettingsError(
                .schemaViolation,
                "'\(key)': field 'type' or \(SchemaRule.nativeTypeFields.keys.sorted().map { "'\($0)'" }.joined(separator: " or ")) is required",
                key: key)
        }
        guard let type = SchemaRule.ValueType(rawValue: typeName) else {
            throw SettingsError(
                .schemaViolation,
                "'\(key)': unknown type '\(typeName)' (one of \(SchemaRule.ValueType.allCases.map(\.rawValue).joined(separator: ", ")))",
                key: key)
        }
        if let native, native.valueType != type {
            throw SettingsError(
                .schemaViolation,
                "'\(key)': \(native.language) '\(native.text)' is held as \(native.valueType.rawValue), not \(type.rawValue)",
                key: key)
        }
        let scopeName = try fields.optionalString("scope") ?? "synced"
        guard let scope = SchemaRule.Scope(rawValue: scopeName) else {
            throw SettingsError(.schemaViolation, "'\(key)': scope must be synced or local", key: key)
        }
        let name = key.hasSuffix(".*") ? key : KeyIdentity.normalize(key)
        try KeyValidation.validate(
            key.hasSuffix(".*") ? String(key.dropLast()) + "x" : name, maximumBytes: 1024)
        var rule = SchemaRule(
            key: name, type: type, minimum: try fields.optionalNumber("min"),
            maximum: try fields.optionalNumber("max"),
            choices: try fields.strings("choices", limit: 10_000),
            maximumLength: try fields.optionalInteger("maxLength").map { Int(clamping: $0) },
            summary: try fields.optionalString("summary"),
            description: try fields.optionalString("description"),
            scope: scope, file: file)
        rule.isSecret = try fields.bool("secret", default: false)
        rule.nativeType = native.map(SchemaRule.NativeType.init)
        if !trusted, let problem = rule.declarationProblem {
            throw SettingsError(.schemaViolation, "'\(key)': \(problem)", key: key)
        }
        if let json = fields.members["default"], json != .null {
            let value = try SettingValue(json: json)
            if !trusted { try rule.check(value, forKey: "\(key) (its default)") }
            rule.defaultValue = value
        }
        return rule
    }

    /// A `defaults.d` file: a JSON object of key → value in the wire's value form.
    private static func readDefaults(at file: String) throws(SettingsError) -> [(String, SettingValue)] {
        do throws(SettingsError) {
            guard case .object(let members) = try JSONValue.parse(FileSystem.read(file, limit: 16 << 20))
            else {
                throw SettingsError(.invalidValue, "must be a JSON object of key → value")
            }
            return try members.sorted { $0.key < $1.key }.map { (key, json) throws(SettingsError) in
                try KeyValidation.validate(key, maximumBytes: 1024)
                return (KeyIdentity.normalize(key), try SettingValue(json: json))
            }
        } catch {
            throw SettingsError(
                .invalidValue, "defaults \(file): \(error.message)", key: error.key, path: file)
        }
    }

    /// The native type a rule's fields declare (`gvariant`), read by the extension that speaks
    /// its language; one read back from a daemon (`trusted`) is kept as declared when none does.
    private static func nativeType(
        of key: String, in fields: JSONFields, trusted: Bool, extensions: SchemaExtensions
    ) throws(SettingsError) -> (any NativeValueType)? {
        for (field, language) in SchemaRule.nativeTypeFields.sorted(by: { $0.key < $1.key }) {
            guard let text = try fields.optionalString(field) else { continue }
            if let read = extensions.nativeTypes[field] { return try read(text) }
            guard trusted, let typeName = try fields.optionalString("type"),
                let type = SchemaRule.ValueType(rawValue: typeName)
            else {
                throw SettingsError(
                    .schemaViolation,
                    "'\(key)': \(language) types ('\(field)') are read with the GNOME support: load the policy with SchemaExtensions.gnome (SettingsGNOME)",
                    key: key)
            }
            return DeclaredNativeType(field: field, language: language, text: text, valueType: type)
        }
        return nil
    }
}
