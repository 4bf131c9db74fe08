/// The rules of a set of schema files: exact keys, and patterns matched by their longest prefix.
///
/// Both are indexed: an exact key is one hash lookup, and a key is matched only against the
/// patterns whose text before the `*` is one of its own prefixes at a dot (a daemon with GNOME's
/// schemas, or an app with 100,000 keys, checks every write against them).
public struct SettingsSchema: Sendable, Equatable {
    /// Every rule, exact keys and patterns.
    public private(set) var rules: [SchemaRule] = []
    /// Where each rule is in `rules`, by its normalized key.
    private var positions: [String: Int] = [:]
    /// Where each exact key's rule is in `rules`.
    private var exact: [String: Int] = [:]
    /// Where the patterns are in `rules`, by their text before the first `*` (which ends at a
    /// dot, or is empty).
    private var patternsByPrefix: [String: [Int]] = [:]

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
        if let position = positions[key] {
            let existing = rules[position]
            guard existing.type == rule.type, existing.gvariantType == rule.gvariantType else {
                throw SettingsError(
                    .schemaViolation,
                    "'\(rule.key)' is declared as \(existing.typeName) in \(existing.file) and as \(rule.typeName) in \(rule.file)",
                    key: rule.key, path: rule.file)
            }
            rules[position] = rule
            return
        }
        positions[key] = rules.count
        if rule.isPattern {
            patternsByPrefix[String(key.prefix { $0 != "*" }), default: []].append(rules.count)
        } else {
            exact[key] = rules.count
        }
        rules.append(rule)
    }

    /// Whether there are no rules.
    public var isEmpty: Bool { rules.isEmpty }

    /// The rule for `key`: its own, else the most specific (longest) pattern that covers it.
    public func rule(forKey key: String) -> SchemaRule? {
        if let position = exact[key] { return rules[position] }
        guard !patternsByPrefix.isEmpty else { return nil }
        let name = KeyIdentity.normalize(key)
        // The longest pattern wins; between two as long, the one with more text before its `*`,
        // then the one declared first.
        var best: (index: Int, rank: (Int, Int, Int))?
        func consider(_ prefix: Substring) {
            for index in patternsByPrefix[String(prefix)] ?? [] where rules[index].covers(name) {
                let rank = (rules[index].key.utf8.count, prefix.utf8.count, -index)
                if let current = best, current.rank >= rank { continue }
                best = (index, rank)
            }
        }
        consider("")
        var position = name.startIndex
        while let dot = name[position...].firstIndex(of: ".") {
            position = name.index(after: dot)
            consider(name[..<position])
        }
        return best.map { rules[$0.index] }
    }
}
