/// One fleet policy as an administrator writes it: keys, each with a value and a level.
///
/// The file form, like a schema file's:
///
/// ```json
/// {"format": "settingsd-policy", "version": 1,
///  "keys": {"ui.theme": {"value": "dark", "level": "mandatory"}}}
/// ```
public struct PolicyDocument: Sendable, Equatable {
    /// How strongly a policy sets a key (after Chrome's and Firefox's policy levels).
    public enum Level: String, Sendable, Equatable, CaseIterable, Comparable {
        /// Locked to the value: neither the user nor a peer can change what the key reads.
        case mandatory
        /// A default the user may override with a value of their own.
        case recommended

        /// Mandatory first.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs == .mandatory && rhs == .recommended
        }
    }

    /// What the policy says of one key.
    public struct Entry: Sendable, Equatable {
        /// The value.
        public var value: SettingValue
        /// Mandatory or recommended.
        public var level: Level

        /// A setting of `value` at `level`.
        public init(value: SettingValue, level: Level) {
            self.value = value
            self.level = level
        }
    }

    /// The most keys one policy may set.
    public static let maximumKeys = 10_000

    /// The keys, in their stored form (NFC).
    public var keys: [String: Entry]

    /// A policy of `keys` (names are normalised as stored keys are).
    public init(keys: [String: Entry] = [:]) {
        self.keys = Dictionary(keys.map { (KeyIdentity.normalize($0.key), $0.value) }) { _, last in last }
    }

    /// Reads a policy file's bytes; `file` names it in errors.
    ///
    /// - Throws: `invalidValue` naming the file and what is wrong: not the format, an unknown
    ///   field, a key that is not a valid key name, a missing value, an unknown level.
    public init(parsing bytes: some Collection<UInt8>, file: String) throws(SettingsError) {
        do throws(SettingsError) {
            try self.init(json: try JSONValue.parse(bytes))
        } catch {
            throw SettingsError(
                .invalidValue, "policy \(file): \(error.message)", key: error.key, path: file)
        }
    }

    /// Reads a policy in its JSON form (`json`).
    package init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "a policy")
        guard try fields.string("format") == "settingsd-policy" else {
            throw SettingsError(.invalidValue, "field 'format' must be \"settingsd-policy\"")
        }
        guard try fields.integer("version") == 1 else {
            throw SettingsError(.invalidValue, "field 'version' must be 1")
        }
        if let unknown = fields.members.dictionary.keys.sorted().first(where: {
            !["format", "version", "keys"].contains($0)
        }) {
            throw SettingsError(
                .invalidValue, "unknown field '\(unknown)' (a policy has format, version and keys)")
        }
        guard case .object(let members)? = fields.members["keys"] else {
            throw SettingsError(.invalidValue, "field 'keys' must be an object of key → {value, level}")
        }
        guard members.count <= Self.maximumKeys else {
            throw SettingsError(
                .invalidValue,
                "a policy sets at most \(Self.maximumKeys) keys; this one sets \(members.count)")
        }
        var keys: [String: Entry] = [:]
        for (key, json) in members.sorted(by: { $0.key < $1.key }) {
            try KeyValidation.validate(key, maximumBytes: 1024)
            let entry = try JSONFields(json, what: "the policy of '\(key)'")
            if let unknown = entry.members.dictionary.keys.sorted().first(where: {
                !["value", "level"].contains($0)
            }) {
                throw SettingsError(
                    .invalidValue, "'\(key)': unknown field '\(unknown)' (a key has value and level)",
                    key: key)
            }
            guard let value = entry.members["value"], value != .null else {
                throw SettingsError(.invalidValue, "'\(key)': field 'value' is required", key: key)
            }
            let levelName = try entry.string("level")
            guard let level = Level(rawValue: levelName) else {
                throw SettingsError(
                    .invalidValue, "'\(key)': level '\(levelName)' is not mandatory or recommended", key: key)
            }
            let name = KeyIdentity.normalize(key)
            guard keys[name] == nil else {
                throw SettingsError(
                    .invalidValue, "'\(key)' is set twice (names are compared in NFC)", key: key)
            }
            keys[name] = Entry(value: try SettingValue(json: value), level: level)
        }
        self.keys = keys
    }

    /// The policy's file form on one line, keys sorted: the same policy always prints the same.
    public var text: String { json.serialized() }

    /// The policy's JSON form.
    package var json: JSONValue {
        .object([
            "format": .string("settingsd-policy"), "version": .integer(1),
            "keys": .object(
                keys.mapValues { .object(["value": $0.value.json, "level": .string($0.level.rawValue)]) }),
        ])
    }

    /// What changes from `old` to this policy, key by key, sorted by key.
    public func changes(from old: PolicyDocument) -> [Change] {
        Set(keys.keys).union(old.keys.keys).sorted().compactMap { key in
            let before = old.keys[key]
            let after = keys[key]
            return before == after ? nil : Change(key: key, before: before, after: after)
        }
    }

    /// One key's change between two revisions.
    public struct Change: Sendable, Equatable {
        /// The key.
        public var key: String
        /// What the older revision said (nil: nothing).
        public var before: Entry?
        /// What the newer one says (nil: nothing).
        public var after: Entry?
    }
}
