/// The rules of a set of schema files: exact keys, and patterns matched by their longest prefix.
public struct SettingsSchema: Sendable, Equatable {
    /// Every rule, exact keys and patterns.
    public private(set) var rules: [SchemaRule] = []
    private var exact: [String: SchemaRule] = [:]
    /// Patterns, longest prefix first, so the most specific one wins.
    private var patterns: [SchemaRule] = []

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
            patterns = rules.filter(\.isPattern).sorted { $0.key.utf8.count > $1.key.utf8.count }
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
        return patterns.first { $0.covers(key) }
    }
}
