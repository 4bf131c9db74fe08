import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Schema rules and locks are indexed, with the same answers as a scan")
struct PolicyIndexTests {
    @Test("The most specific pattern wins, an exact key beats every pattern, redeclaring replaces")
    func patternsBySpecificity() throws {
        var schema = try SettingsSchema(rules: [
            SchemaRule(key: "a.*", type: .any, file: "1"),
            SchemaRule(key: "a.b.*", type: .int, file: "2"),
            SchemaRule(key: "a.*.c", type: .string, file: "3"),
            SchemaRule(key: "*.tail", type: .bool, file: "4"),
            SchemaRule(key: "a.b.exact", type: .double, file: "5"),
        ])
        #expect(schema.rule(forKey: "a.x")?.file == "1")
        #expect(schema.rule(forKey: "a.b.x")?.file == "2")
        #expect(schema.rule(forKey: "a.x.y.c")?.file == "3")
        #expect(schema.rule(forKey: "a.b.c")?.file == "2")  // "a.b.*" and "a.*.c" are as long: the first wins
        #expect(schema.rule(forKey: "z.tail")?.file == "4")
        #expect(schema.rule(forKey: "a.b.exact")?.file == "5")
        #expect(schema.rule(forKey: "b") == nil)
        try schema.add(SchemaRule(key: "a.b.*", type: .int, summary: "again", file: "6"))
        #expect(schema.rule(forKey: "a.b.x")?.summary == "again")
        #expect(schema.rules.count == 5)
        #expect(throws: SettingsError.self) {
            try schema.add(SchemaRule(key: "a.b.*", type: .string, file: "7"))
        }
    }

    @Test(
        "The indexed lookup answers as a scan of every rule, for random patterns and keys",
        arguments: [1, 2, 3, 4, 5] as [UInt64])
    func indexedLookupIsAScan(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        // Short and long names (prefixes of 64 bytes and more take the index's other path),
        // names with dots inside a segment's reach, and non-ASCII ones.
        let names = ["a", "b", "org", "gnome", "caf\u{E9}", String(repeating: "long", count: 20), "x1", "x2"]
        func name() -> String { names.randomElement(using: &random) ?? "a" }
        var rules: [SchemaRule] = []
        for index in 0..<60 {
            var parts = (0..<Int.random(in: 1...4, using: &random)).map { _ in name() }
            // Seeds 4 and 5 keep every first segment literal, so keys are first told apart by it.
            if Bool.random(using: &random) {
                let star = Int.random(
                    in: (seed > 3 ? 1 : 0)..<max(parts.count, seed > 3 ? 2 : 1), using: &random)
                if star < parts.count { parts[star] = "*" } else { parts.append("*") }
                if parts == ["*"] { parts.append(name()) }
            }
            rules.append(SchemaRule(key: parts.joined(separator: "."), type: .any, file: "\(index)"))
        }
        var schema = SettingsSchema()
        var kept: [SchemaRule] = []
        for rule in rules where !kept.contains(where: { $0.key == rule.key }) {
            try schema.add(rule)
            kept.append(rule)
        }
        for _ in 0..<3_000 {
            let key = (0..<Int.random(in: 1...5, using: &random)).map { _ in name() }.joined(separator: ".")
            let exact = kept.first { !$0.isPattern && $0.key == key }
            var best: (rule: SchemaRule, rank: (Int, Int, Int))?
            for (index, rule) in kept.enumerated() where rule.isPattern && rule.covers(key) {
                let rank = (rule.key.utf8.count, rule.key.prefix { $0 != "*" }.utf8.count, -index)
                if let current = best, current.rank >= rank { continue }
                best = (rule, rank)
            }
            #expect(schema.rule(forKey: key)?.file == (exact ?? best?.rule)?.file, "\(key)")
        }
    }

    @Test("A schema knows whether any rule makes keys local or secret, so others skip the lookups")
    func localAndSecretRulesAreKnown() throws {
        var schema = try SettingsSchema(rules: [
            SchemaRule(key: "a.*", type: .int, file: "1"), SchemaRule(key: "b.c", type: .string, file: "1"),
        ])
        #expect(!schema.hasLocalRules && !schema.hasSecretRules)
        var policy = SettingsPolicy()
        policy.schema = schema
        #expect(!policy.isLocal("a.x"))
        try schema.add(SchemaRule(key: "a.*.size", type: .any, scope: .local, file: "2"))
        #expect(schema.hasLocalRules && !schema.hasSecretRules)
        policy.schema = schema
        #expect(policy.isLocal("a.x.size"))
        #expect(!policy.isLocal("a.x"))
        var secret = SchemaRule(key: "b.token", type: .string, file: "3")
        secret.isSecret = true
        try schema.add(secret)
        #expect(schema.hasSecretRules)
    }

    @Test(
        "A key's scope is its rules' scope, whatever first segments the local rules have",
        arguments: [1, 2, 3, 4] as [UInt64])
    func scopeMatchesTheRules(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let names = ["a", "org", "system", "gnome", "caf\u{E9}", "cafe\u{301}", "x"]
        func name() -> String { names.randomElement(using: &random) ?? "a" }
        var schema = try SettingsSchema(rules: MachineKeys.rules)
        for index in 0..<30 {
            var parts = (0..<Int.random(in: 1...3, using: &random)).map { _ in name() }
            // A pattern in the first segment (seed 4) leaves no segment to tell keys apart by.
            if Bool.random(using: &random) {
                let star = seed == 4 ? 0 : Int.random(in: 1...parts.count, using: &random)
                if star < parts.count { parts[star] = "*" } else { parts.append("*") }
            }
            let key = parts.joined(separator: ".")
            guard !schema.rules.contains(where: { $0.key == key }),
                !schema.scopeRules.contains(where: { $0.key == key })
            else { continue }
            let scope: SchemaRule.Scope = Bool.random(using: &random) ? .local : .synced
            let typed = Bool.random(using: &random)
            var rule = SchemaRule(key: key, type: .any, scope: scope, file: "\(index)")
            rule.isScopeOnly = !typed
            try schema.add(rule)
        }
        for _ in 0..<3_000 {
            let key = (0..<Int.random(in: 1...4, using: &random)).map { _ in name() }.joined(separator: ".")
            let expected = schema.scopeRule(forKey: key)?.scope ?? schema.rule(forKey: key)?.scope ?? .synced
            #expect(schema.scope(forKey: key) == expected, "\(key)")
        }
        #expect(schema.scope(forKey: "org.gnome.gedit.window-size") == .local)
        #expect(schema.scope(forKey: "app.window-size") == .synced)
    }

    @Test("A lock is found by exact key or by any prefix, the first in file order, among 20,000")
    func locksByKeyAndPrefix() throws {
        var policy = SettingsPolicy()
        var locks = (0..<20_000).map { SettingsPolicy.Lock(key: "bulk.k\($0)", file: "bulk") }
        locks += [
            SettingsPolicy.Lock(key: "ui.", file: "first"),
            SettingsPolicy.Lock(key: "ui.theme", file: "second"),
            SettingsPolicy.Lock(key: "ui.font.", file: "third"),
        ]
        policy.locks = locks
        #expect(policy.lock(forKey: "bulk.k19999")?.file == "bulk")
        #expect(policy.lock(forKey: "bulk.k20000") == nil)
        #expect(policy.lock(forKey: "ui.theme")?.file == "first")
        #expect(policy.lock(forKey: "ui.font.size")?.file == "first")
        #expect(policy.lock(forKey: "uix") == nil)
        policy.locks = [SettingsPolicy.Lock(key: "ui.font.", file: "only")]
        #expect(policy.lock(forKey: "ui.font.size")?.file == "only")
        #expect(policy.lock(forKey: "ui.theme") == nil)
    }
}
