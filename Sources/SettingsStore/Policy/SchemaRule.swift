/// What a schema declares about one key, or about every key under a pattern (`window.*`): its
/// type, default, bounds, description and sync scope (see `docs/SCHEMA.md`).
package struct SchemaRule: Sendable, Equatable {
    /// The type a value must have: a `SettingValue.Kind`, or any.
    package struct ValueType: Hashable, Sendable {
        /// The kind values must have; nil: any.
        package let kind: SettingValue.Kind?

        package init(kind: SettingValue.Kind?) {
            self.kind = kind
        }

        package static let any = ValueType(kind: nil)
        package static let bool = ValueType(kind: .bool)
        package static let int = ValueType(kind: .integer)
        package static let double = ValueType(kind: .double)
        package static let string = ValueType(kind: .string)
        package static let data = ValueType(kind: .data)
        package static let date = ValueType(kind: .date)
        package static let array = ValueType(kind: .array)
        package static let dictionary = ValueType(kind: .dictionary)

        /// Every type, `any` first.
        package static let allCases = [any] + SettingValue.Kind.allCases.map { ValueType(kind: $0) }

        /// The name schema files, the command line and messages use: the kind's name, but `int`
        /// for integers (as schema files have always said), and `any`.
        package var rawValue: String {
            guard let kind else { return "any" }
            return kind == .integer ? "int" : kind.rawValue
        }

        /// The type named `rawValue`, as `rawValue` names them.
        package init?(rawValue: String) {
            guard let type = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = type
        }

        /// Whether a value of `kind` has this type (an integer is a double too).
        package func admits(_ kind: SettingValue.Kind) -> Bool {
            self.kind == nil || self.kind == kind || (self.kind == .double && kind == .integer)
        }
    }

    /// Whether a key travels to peers and the hub.
    package enum Scope: String, Sendable {
        /// Synced like any key (the default).
        case synced
        /// Kept on this replica only: never sent to peers or the hub, never applied from them.
        case local
    }

    /// The key (`audio.volume`) or the pattern (`window.*`, every key starting `window.`).
    package let key: String
    /// The type.
    package var type: ValueType
    /// The default, read while no value is stored (never stored or synced).
    package var defaultValue: SettingValue?
    /// The smallest number allowed.
    package var minimum: Double?
    /// The largest number allowed.
    package var maximum: Double?
    /// The strings allowed, if only some are: for an array, the strings its elements may be
    /// (GSettings' flags).
    package var choices: [String]?
    /// The longest string (characters), data (bytes), array or dictionary (elements) allowed.
    package var maximumLength: Int?
    /// One line about the key.
    package var summary: String?
    /// More about the key.
    package var description: String?
    /// Whether the key syncs.
    package var scope: Scope
    /// Whether the history records the key's values only as fingerprints.
    package var isSecret = false
    /// The exact type in another type language, from a GSettings schema or a JSON rule's
    /// `gvariant` (`NativeValueType`): values must have that form (a GVariant `i` is a 32-bit
    /// integer, an `as` an array of strings), and go out to that system in it.
    package var nativeType: NativeType?
    /// Whether the rule only sets the scope of the keys it covers (it declares no type): the
    /// most specific scope-only rule decides a key's scope over the rule that types it.
    package var isScopeOnly = false
    /// The schema file that declared it.
    package var file: String

    /// Creates a rule; everything but the key, the type and the file is optional.
    package init(
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

    /// The type as messages name it: `int`, or `int (GVariant 'u')`.
    var typeName: String {
        type.rawValue + (nativeType.map { " (\($0.base.language) '\($0.base.text)')" } ?? "")
    }

    /// Whether the rule names a pattern rather than one key: a `*` between dots or at the end
    /// stands for one or more names (`window.*` covers every key starting `window.`;
    /// `media-keys.*.binding` covers `media-keys.custom-keybindings.custom0.binding`, a
    /// relocatable GSettings schema).
    package var isPattern: Bool {
        // A `*` that is a whole name (`.*` at the end, `.*.` inside, `*.` at the start).
        guard key.utf8.count > 1 else { return false }
        var previous = UInt8(ascii: ".")
        var starred = false
        for byte in key.utf8 {
            if starred && byte == UInt8(ascii: ".") { return true }
            starred = byte == UInt8(ascii: "*") && previous == UInt8(ascii: ".")
            previous = byte
        }
        return starred
    }

    /// For a pattern with its only `*` at the end, the prefix its keys start with (`window.`).
    var prefix: String? {
        guard key.hasSuffix(".*") else { return nil }
        let prefix = key.dropLast()
        return prefix.contains("*") ? nil : String(prefix)
    }

    /// Whether the pattern covers `name`.
    func covers(_ name: String) -> Bool {
        covers(name, bytes: Array(KeyIdentity.normalize(name).utf8))
    }

    /// Whether the pattern covers `name`, whose normalized form's bytes are `bytes`.
    func covers(_ name: String, bytes: [UInt8]) -> Bool {
        if let prefix { return KeyIdentity.hasPrefix(name, prefix) }
        if let covered = coversWithOneStar(bytes) { return covered }
        let pattern = key.split(separator: ".", omittingEmptySubsequences: false)
        let names = KeyIdentity.normalize(name).split(separator: ".", omittingEmptySubsequences: false)
        return Self.matches(pattern[...], names[...])
    }

    /// For a pattern with one `*` (`org.gnome.*.window-size`), whether `name` (normalized) is its
    /// text before the star, one or more whole names, then its text after: compared as bytes, as
    /// every write to a GNOME key asks. Nil for other patterns.
    private func coversWithOneStar(_ name: [UInt8]) -> Bool? {
        let pattern = key.utf8
        guard let star = pattern.firstIndex(of: UInt8(ascii: "*")),
            !pattern[pattern.index(after: star)...].contains(UInt8(ascii: "*"))
        else { return nil }
        let head = pattern[..<star]
        let tail = pattern[pattern.index(after: star)...]
        guard name.count > head.count + tail.count, name.starts(with: head),
            name[(name.count - tail.count)...].elementsEqual(tail)
        else { return false }
        let middle = name[head.count..<(name.count - tail.count)]
        let dot = UInt8(ascii: ".")
        if middle.first == dot || middle.last == dot { return false }
        return !zip(middle, middle.dropFirst()).contains { $0 == dot && $1 == dot }
    }

    private static func matches(_ pattern: ArraySlice<Substring>, _ names: ArraySlice<Substring>) -> Bool {
        guard let part = pattern.first else { return names.isEmpty }
        guard part == "*" else {
            return names.first == part && matches(pattern.dropFirst(), names.dropFirst())
        }
        let rest = pattern.dropFirst()
        guard names.count > rest.count else { return false }
        // One or more non-empty names, as many as leave enough for the rest of the pattern.
        for taken in 1...(names.count - rest.count) {
            guard !names.prefix(taken).contains(where: \.isEmpty) else { return false }
            if matches(rest, names.dropFirst(taken)) { return true }
        }
        return false
    }

    /// Throws `schemaViolation` unless `value` obeys the rule; the message names the key, the
    /// rule and the file.
    package func check(_ value: SettingValue, forKey name: String) throws(SettingsError) {
        if let problem = violation(of: value) {
            throw SettingsError(
                .schemaViolation, "'\(name)' \(problem) (schema \(file), key \(key))", key: name, path: file)
        }
    }

    private func violation(of value: SettingValue) -> String? {
        if let native = nativeType?.base {
            do throws(SettingsError) {
                try native.check(value)
            } catch {
                // A secret's message never holds the value it refuses.
                return "must be a \(native.language) '\(native.text)'"
                    + (isSecret ? "" : ": \(error.message)")
            }
        }
        guard type.admits(value.kind) else { return "must be \(type.rawValue), not \(value.kind)" }
        let number: Double? =
            switch value {
            case .integer(let integer): Double(integer)
            case .double(let double): double
            default: nil
            }
        func refused(_ shown: String) -> String { isSecret ? "" : ", not \(shown)" }
        if let number, let minimum, !(number >= minimum) {
            return "must be at least \(Self.format(minimum))" + refused(Self.format(number))
        }
        if let number, let maximum, !(number <= maximum) {
            return "must be at most \(Self.format(maximum))" + refused(Self.format(number))
        }
        if let choices {
            let strings: [String] =
                switch value {
                case .string(let text): [text]
                case .array(let elements):
                    elements.compactMap { if case .string(let text) = $0 { text } else { nil } }
                default: []
                }
            if let text = strings.first(where: { !choices.contains($0) }) {
                return
                    "must be \(value.kind == .array ? "made of" : "one of") \(choices.map { "'\($0)'" }.joined(separator: ", "))"
                    + refused("'\(text.debugDescriptionTruncated)'")
            }
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
