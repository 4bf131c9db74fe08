/// The rules of a set of schema files: exact keys, and patterns matched by their longest prefix.
public struct SettingsSchema: Sendable, Equatable {
    /// Every rule, exact keys and patterns.
    public private(set) var rules: [SchemaRule] = []
    private var exact: [String: SchemaRule] = [:]
    /// Patterns, longest prefix first, so the most specific one wins.
    private var patterns: [SchemaRule] = []
    /// Each pattern's text before its first `*`: a key that does not start with it is skipped
    /// without matching names (a daemon with GNOME's schemas checks every write against them).
    private var patternPrefixes: [[UInt8]] = []

    /// An empty schema: every key is free-form.
    public init() {}

    /// A schema of `rules`.
    ///
    /// - Throws: `schemaViolation` when two rules declare one key or pattern with different
    ///   types, naming both files.
    public init(rules: [SchemaRule]) throws(SettingsError) {
        for rule in rules { try add(rule) }
    }

    /// Adds a rule; a key declared again must keep its type (the later rule replaces the rest).
    public mutating func add(_ rule: SchemaRule) throws(SettingsError) {
        let key = KeyIdentity.normalize(rule.key)
        let existing =
            rule.isPattern ? patterns.first { KeyIdentity.normalize($0.key) == key } : exact[key]
        if let existing {
            guard existing.type == rule.type, existing.gvariantType == rule.gvariantType else {
                throw SettingsError(
                    .schemaViolation,
                    "'\(rule.key)' is declared as \(existing.typeName) in \(existing.file) and as \(rule.typeName) in \(rule.file)",
                    key: rule.key, path: rule.file)
            }
            rules.removeAll { KeyIdentity.normalize($0.key) == key }
        }
        rules.append(rule)
        if rule.isPattern {
            patterns.removeAll { KeyIdentity.normalize($0.key) == key }
            // Longest first, so that the most specific pattern wins.
            let index = patterns.firstIndex { $0.key.utf8.count < rule.key.utf8.count } ?? patterns.endIndex
            patterns.insert(rule, at: index)
            patternPrefixes = patterns.map {
                Array(KeyIdentity.normalize($0.key).utf8.prefix { $0 != UInt8(ascii: "*") })
            }
        } else {
            exact[key] = rule
        }
    }

    /// Whether there are no rules.
    public var isEmpty: Bool { rules.isEmpty }

    /// The rule for `key`: its own, else the most specific pattern that covers it.
    public func rule(forKey key: String) -> SchemaRule? {
        if let rule = exact[key] { return rule }
        guard !patterns.isEmpty else { return nil }
        // By index: a rule is a large value, copied only once it matches.
        let bytes = Array(KeyIdentity.normalize(key).utf8)
        for index in patterns.indices {
            let prefix = patternPrefixes[index]
            guard bytes.count >= prefix.count, bytes[..<prefix.count].elementsEqual(prefix) else { continue }
            if patterns[index].covers(key) { return patterns[index] }
        }
        return nil
    }
}
