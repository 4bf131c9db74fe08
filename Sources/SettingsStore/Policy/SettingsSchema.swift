/// The rules of a set of schema files: exact keys, and patterns matched by their longest prefix.
/// Rules that type keys and rules that only set their scope are apart: a scope-only rule
/// (`"org.gnome.*.window-size": {"scope": "local"}`) applies over whatever types the key.
package struct SettingsSchema: Sendable, Equatable {
    /// The rules that type keys.
    private var typed = RuleIndex()
    /// The rules that only set the scope of the keys they cover (`isScopeOnly`).
    private var scopes = RuleIndex()

    /// Every rule that types keys, exact keys and patterns.
    package var rules: [SchemaRule] { typed.rules }
    /// Every rule that only sets a scope (`{"scope": "local"}` with no type), exact keys and patterns.
    package var scopeRules: [SchemaRule] { scopes.rules }

    /// An empty schema: every key is free-form.
    package init() {}

    /// A schema of `rules`.
    ///
    /// - Throws: `schemaViolation` when two rules declare one key or pattern with different
    ///   types, naming both files.
    package init(rules: [SchemaRule]) throws(SettingsError) {
        for rule in rules { try add(rule) }
    }

    /// Adds a rule; a key declared again must keep its type (the later rule replaces the rest).
    /// A scope-only rule replaces the scope-only rule of the same key or pattern.
    package mutating func add(_ rule: SchemaRule) throws(SettingsError) {
        if rule.isScopeOnly { try scopes.add(rule) } else { try typed.add(rule) }
    }

    /// Whether there are no rules.
    package var isEmpty: Bool { typed.rules.isEmpty && scopes.rules.isEmpty }

    /// Whether some rule may make a key `local` (false: every key is synced, and no key's rules
    /// need looking up to know it, as every arriving entry and every digest would).
    package var hasLocalRules: Bool { typed.hasLocalRules || scopes.hasLocalRules }

    /// Whether some rule may make a key secret (false: no history record needs its key's rule).
    package var hasSecretRules: Bool { typed.hasSecretRules }

    /// The rule that types `key`: its own, else the most specific (longest) pattern that covers it.
    package func rule(forKey key: String) -> SchemaRule? {
        typed.rule(forKey: key)
    }

    /// The most specific scope-only rule that covers `key`, if any.
    package func scopeRule(forKey key: String) -> SchemaRule? {
        scopes.rule(forKey: key)
    }

    /// The scope of `key`: the most specific scope-only rule's, else its typing rule's, else synced.
    package func scope(forKey key: String) -> SchemaRule.Scope {
        guard hasLocalRules, mayBeLocal(key) else { return .synced }
        return scopes.rule(forKey: key)?.scope ?? typed.rule(forKey: key)?.scope ?? .synced
    }

    /// False when no `local` rule can cover `key`: its first segment (the text before the first
    /// dot) is none of theirs. Every daemon reads the built-in machine keys, all `local` and all
    /// under `org.` or `system.`, so this spares an app's keys and most others two rule lookups
    /// (a hash of the whole key each) on every write and every arriving entry.
    private func mayBeLocal(_ key: String) -> Bool {
        RuleIndex.mayCover(key, leads: typed.localLeads) || RuleIndex.mayCover(key, leads: scopes.localLeads)
    }

    /// Whether the history keeps `key`'s values as fingerprints only (its rule is `secret`).
    package func isSecret(_ key: String) -> Bool {
        hasSecretRules && rule(forKey: key)?.isSecret == true
    }
}

/// Rules indexed for lookup: an exact key is one hash lookup, and a key is matched only against
/// the patterns whose text before the `*` is one of its own prefixes at a dot (a daemon with
/// GNOME's schemas, or an app with 100,000 keys, checks every write against them).
private struct RuleIndex: Sendable, Equatable {
    private(set) var rules: [SchemaRule] = []
    /// Where each rule is in `rules`, by its normalized key.
    private var positions: [String: Int] = [:]
    /// Where each exact key's rule is in `rules`.
    private var exact: [String: Int] = [:]
    /// Where the patterns are in `rules`, by their text before the first `*` (which ends at a
    /// dot, or is empty).
    private var patternsByPrefix: [String: [Int]] = [:]
    /// The byte lengths of those texts: bit n for a length n below 64, and whether any is longer.
    /// A key's prefix of another length names no pattern, so most prefixes of most keys are
    /// passed over without being made into a string and hashed (every write and every arriving
    /// entry asks for its key's rules, some several times).
    private var prefixLengths: UInt64 = 0
    private var hasLongPrefixes = false
    /// Whether a rule added was `local`, or secret (a rule replaced later may have changed that:
    /// then the lookups these spare are made for nothing, never left out).
    private(set) var hasLocalRules = false
    private(set) var hasSecretRules = false
    /// The first segment (the text before the first dot) of every rule's key, each once, and of
    /// every `local` rule's: a key whose first segment is none of them has no rule, or no local
    /// one, without its whole text being hashed (GNOME's schemas all live under `org.`, so an
    /// app's keys are told so at once). Nil when a first segment holds a `*`, which any key may
    /// match, or when there are too many to compare one by one.
    private(set) var leads: [[UInt8]]? = []
    private(set) var localLeads: [[UInt8]]? = []
    private static let mostLeads = 32

    mutating func add(_ rule: SchemaRule) throws(SettingsError) {
        let key = KeyIdentity.normalize(rule.key)
        let lead = Array(key.utf8.prefix { $0 != UInt8(ascii: ".") })
        Self.record(lead, in: &leads)
        if rule.scope == .local {
            hasLocalRules = true
            Self.record(lead, in: &localLeads)
        }
        if rule.isSecret { hasSecretRules = true }
        if let position = positions[key] {
            let existing = rules[position]
            guard existing.type == rule.type, existing.nativeType == rule.nativeType else {
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
            let prefix = String(key.prefix { $0 != "*" })
            patternsByPrefix[prefix, default: []].append(rules.count)
            let length = prefix.utf8.count
            if length < 64 { prefixLengths |= 1 << length } else { hasLongPrefixes = true }
        } else {
            exact[key] = rules.count
        }
        rules.append(rule)
    }

    /// Adds a rule's first segment to `leads`, unless it is there already.
    private static func record(_ lead: [UInt8], in leads: inout [[UInt8]]?) {
        guard let known = leads, !known.contains(lead) else { return }
        leads = lead.contains(UInt8(ascii: "*")) || known.count == mostLeads ? nil : known + [lead]
    }

    /// False when `key`'s first segment is none of `leads` (nil: any key may be covered).
    static func mayCover(_ key: String, leads: [[UInt8]]?) -> Bool {
        guard let leads else { return true }
        guard !leads.isEmpty else { return false }
        // Over the key's own bytes: every write and every arriving entry asks, twice.
        var key = key
        return key.withUTF8 { bytes in
            var length = 0
            while length < bytes.count, bytes[length] != UInt8(ascii: ".") {
                // A key not in NFC yet is normalized by the full lookup; the leads are ASCII or NFC.
                guard bytes[length] < 0x80 else { return true }
                length += 1
            }
            let lead = UnsafeBufferPointer(rebasing: bytes[..<length])
            return leads.contains { candidate in
                candidate.count == length && candidate.withUnsafeBufferPointer { $0.elementsEqual(lead) }
            }
        }
    }

    func rule(forKey key: String) -> SchemaRule? {
        // No rules (most stores): not even the key's hash, which every write and every entry
        // arriving from a replica would pay.
        guard !rules.isEmpty, Self.mayCover(key, leads: leads) else { return nil }
        if let position = exact[key] { return rules[position] }
        guard !patternsByPrefix.isEmpty else { return nil }
        let name = KeyIdentity.normalize(key)
        // The longest pattern wins; between two as long, the one with more text before its `*`,
        // then the one declared first.
        var best: (index: Int, rank: (Int, Int, Int))?
        var bytes: [UInt8]?
        func consider(_ length: Int) {
            guard length < 64 ? prefixLengths >> length & 1 == 1 : hasLongPrefixes,
                let candidates = patternsByPrefix[String(decoding: name.utf8.prefix(length), as: UTF8.self)]
            else { return }
            let keyBytes = bytes ?? Array(name.utf8)
            bytes = keyBytes
            for index in candidates where rules[index].covers(name, bytes: keyBytes) {
                let rank = (rules[index].key.utf8.count, length, -index)
                if let current = best, current.rank >= rank { continue }
                best = (index, rank)
            }
        }
        consider(0)
        var length = 0
        for byte in name.utf8 {
            length += 1
            if byte == UInt8(ascii: ".") { consider(length) }
        }
        return best.map { rules[$0.index] }
    }
}
