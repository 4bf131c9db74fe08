/// What a schema declares about one key, or about every key under a pattern (`window.*`): its
/// type, default, bounds, description and sync scope (see `docs/SCHEMA.md`).
public struct SchemaRule: Sendable, Equatable {
    /// The type a value must have.
    public enum ValueType: String, Sendable, CaseIterable {
        /// `true` or `false`.
        case bool
        /// A 64-bit integer.
        case int
        /// A double (integers are accepted too).
        case double
        /// A string.
        case string
        /// Bytes.
        case data
        /// A date.
        case date
        /// An array.
        case array
        /// A dictionary of string keys.
        case dictionary
        /// Any value.
        case any
    }

    /// Whether a key travels to peers and the hub.
    public enum Scope: String, Sendable {
        /// Synced like any key (the default).
        case synced
        /// Kept on this replica only: never sent to peers or the hub, never applied from them.
        case local
    }

    /// The key (`audio.volume`) or the pattern (`window.*`, every key starting `window.`).
    public let key: String
    /// The type.
    public var type: ValueType
    /// The default, read while no value is stored (never stored or synced).
    public var defaultValue: SettingValue?
    /// The smallest number allowed.
    public var minimum: Double?
    /// The largest number allowed.
    public var maximum: Double?
    /// The strings allowed, if only some are.
    public var choices: [String]?
    /// The longest string (characters), data (bytes), array or dictionary (elements) allowed.
    public var maximumLength: Int?
    /// One line about the key.
    public var summary: String?
    /// More about the key.
    public var description: String?
    /// Whether the key syncs.
    public var scope: Scope
    /// Whether the history records the key's values only as fingerprints.
    public var isSecret = false
    /// The schema file that declared it.
    public var file: String

    /// Creates a rule; everything but the key, the type and the file is optional.
    public init(
        key: String, type: ValueType, defaultValue: SettingValue? = nil, minimum: Double? = nil,
        maximum: Double? = nil, choices: [String]? = nil, maximumLength: Int? = nil, summary: String? = nil,
        description: String? = nil, scope: Scope = .synced, file: String
    ) {
        self.key = key
        self.type = type
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.choices = choices
        self.maximumLength = maximumLength
        self.summary = summary
        self.description = description
        self.scope = scope
        self.file = file
    }

    /// Whether the rule names a pattern (`prefix.*`) rather than one key.
    public var isPattern: Bool { key.hasSuffix(".*") }

    /// For a pattern, the prefix its keys start with (`window.`).
    var prefix: String? { isPattern ? String(key.dropLast()) : nil }

    /// Throws `schemaViolation` unless `value` obeys the rule; the message names the key, the
    /// rule and the file.
    public func check(_ value: SettingValue, forKey name: String) throws(SettingsError) {
        if let problem = violation(of: value) {
            throw SettingsError(
                .schemaViolation, "'\(name)' \(problem) (schema \(file), key \(key))", key: name, path: file)
        }
    }

    private func violation(of value: SettingValue) -> String? {
        switch (type, value) {
        case (.any, _), (.bool, .bool), (.int, .integer), (.double, .double), (.double, .integer),
            (.string, .string),
            (.data, .data), (.date, .date), (.array, .array), (.dictionary, .dictionary):
            break
        default:
            return "must be \(type.rawValue), not \(value.kind)"
        }
        let number: Double? =
            switch value {
            case .integer(let integer): Double(integer)
            case .double(let double): double
            default: nil
            }
        if let number, let minimum, !(number >= minimum) {
            return "must be at least \(Self.format(minimum)), not \(Self.format(number))"
        }
        if let number, let maximum, !(number <= maximum) {
            return "must be at most \(Self.format(maximum)), not \(Self.format(number))"
        }
        if let choices, case .string(let text) = value, !choices.contains(text) {
            return
                "must be one of \(choices.map { "'\($0)'" }.joined(separator: ", ")), not '\(text.debugDescriptionTruncated)'"
        }
        if let maximumLength {
            let length: Int? =
                switch value {
                case .string(let text): text.count
                case .data(let data): data.count
                case .array(let elements): elements.count
                case .dictionary(let members): members.count
                default: nil
                }
            if let length, length > maximumLength {
                return "is \(length) long, over the maximum length of \(maximumLength)"
            }
        }
        return nil
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
