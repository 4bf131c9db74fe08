import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Rules that only set a scope (`{"scope": "local"}`, no type), and the built-in machine keys.
@Suite("Scope-only rules and the keys that stay on one machine")
struct ScopeRuleTests {
    let directory = TemporaryDirectory()

    private func writeSchema(_ keys: String, name: String = "mine.json") throws -> String {
        let folder = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "{\"format\": \"settingsd-schema\", \"version\": 1, \"keys\": {\(keys)}}".write(
            toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        return folder
    }

    @Test("the built-in machine keys parse whole, each a local scope-only rule")
    func builtInMachineKeys() {
        let declared = MachineKeys.text.components(separatedBy: "\"scope\":").count - 1
        #expect(MachineKeys.rules.count == declared)
        #expect(MachineKeys.rules.allSatisfy { $0.isScopeOnly && $0.scope == .local })
        #expect(MachineKeys.rules.allSatisfy { $0.file == MachineKeys.fileName })
    }

    @Test("keys that hold commands a desktop runs stay local by default, with the GSettings schemas loaded")
    func commandKeysStayLocal() throws {
        let directories =
            FileManager.default.fileExists(atPath: "/usr/share/glib-2.0/schemas")
            ? ["/usr/share/glib-2.0/schemas"] : []
        let policy = try SettingsPolicy.load(
            schemaDirectories: directories, systemDirectory: nil, extensions: .gnome)
        for key in [
            "org.gnome.settings-daemon.plugins.media-keys.custom-keybindings",
            "org.gnome.settings-daemon.plugins.media-keys.custom-keybindings.custom0.command",
            "org.gnome.settings-daemon.plugins.media-keys.custom-keybindings.custom0.binding",
            "org.gnome.desktop.applications.terminal.exec",
            "org.gnome.desktop.applications.office.calendar.exec",
            "org.gnome.desktop.screensaver.logout-command",
            "org.gnome.desktop.media-handling.autorun-x-content-start-app",
        ] {
            #expect(policy.isLocal(key), "\(key) would sync")
        }
        #expect(!policy.isLocal("org.gnome.settings-daemon.plugins.media-keys.volume-up"))
    }

    @Test("a scope-only rule sets the scope over the rule that types the key; the most specific one wins")
    func scopeOverTypedRule() throws {
        var schema = try SettingsSchema(rules: [
            SchemaRule(
                key: "org.gnome.app.window-size", type: .array, scope: .synced, file: "app.gschema.xml")
        ])
        #expect(schema.scope(forKey: "org.gnome.app.window-size") == .synced)
        var local = SchemaRule(key: "org.gnome.*.window-size", type: .any, scope: .local, file: "built-in")
        local.isScopeOnly = true
        try schema.add(local)
        #expect(schema.scope(forKey: "org.gnome.app.window-size") == .local)
        #expect(schema.rule(forKey: "org.gnome.app.window-size")?.type == .array, "the typing rule is kept")
        var exact = SchemaRule(
            key: "org.gnome.app.window-size", type: .any, scope: .synced, file: "mine.json")
        exact.isScopeOnly = true
        try schema.add(exact)
        #expect(schema.scope(forKey: "org.gnome.app.window-size") == .synced)
        #expect(schema.scope(forKey: "org.gnome.other.window-size") == .local)
        #expect(schema.scope(forKey: "unrelated.key") == .synced)
    }

    @Test("a user's schema file overrides a built-in machine key, and a policy without one keeps them local")
    func userOverridesBuiltIn() throws {
        let none = try SettingsPolicy.load(schemaDirectories: [], systemDirectory: nil, extensions: .gnome)
        #expect(none.isLocal("org.gnome.nautilus.window-state.initial-size"))
        #expect(none.isLocal("system.proxy.http.host"))
        #expect(!none.isLocal("org.gnome.desktop.interface.gtk-theme"))
        let folder = try writeSchema(
            #""org.gnome.*.window-size": {"scope": "synced", "summary": "same screens"}"#)
        let mine = try SettingsPolicy.load(
            schemaDirectories: [folder], systemDirectory: nil, extensions: .gnome)
        #expect(!mine.isLocal("org.gnome.app.window-size"))
        #expect(mine.isLocal("org.gnome.app.window-position"))
        #expect(
            mine.schema.scopeRule(forKey: "org.gnome.app.window-size")?.file.hasSuffix("mine.json") == true)
    }

    @Test("a rule without a type takes only scope, summary and description, and a valid scope")
    func scopeOnlyRuleIsStrict() throws {
        for (keys, message) in [
            (#""a.b": {"scope": "local", "min": 1}"#, "sets only a scope"),
            (#""a.b": {"scope": "nearby"}"#, "scope must be synced or local"),
            (#""a.b": {"summary": "no type"}"#, "field 'type' or 'gvariant' is required"),
        ] {
            let folder = try writeSchema(keys, name: "bad.json")
            #expect {
                try SettingsPolicy.load(schemaDirectories: [folder], systemDirectory: nil, extensions: .gnome)
            } throws: { error in
                "\(error)".contains(message)
            }
        }
    }

    @Test("a key a scope-only rule makes local is neither sent to nor taken from a peer")
    func scopeOnlyLocalKeysStay() async throws {
        var configuration = SettingsConfiguration()
        configuration.policy = try SettingsPolicy.load(
            schemaDirectories: [], systemDirectory: nil, extensions: .gnome)
        let (a, b) = (Settings(inMemoryWith: configuration), Settings(inMemoryWith: configuration))
        try a.set([1280, 720], forKey: "org.gnome.app.window-size")
        try b.set([800, 600], forKey: "org.gnome.app.window-size")
        try a.set("dark", forKey: "org.gnome.app.theme")
        let link = InProcessLink(a, b)
        try await waitUntil { b.value(forKey: "org.gnome.app.theme") == "dark" }
        try await waitForConvergence([a, b])
        #expect(b.value(forKey: "org.gnome.app.window-size") == [800, 600])
        #expect(a.value(forKey: "org.gnome.app.window-size") == [1280, 720])
        link.disconnect()
    }

    @Test("a one-star pattern covers exactly the names a whole-name match covers", arguments: [1, 2, 3])
    func oneStarPatternsMatchTheReference(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let parts = ["org", "gnome", "app", "window-size", "", "a", "size"]
        for pattern in ["org.gnome.*.window-size", "*.size", "org.*.app.size", "a.*.a"] {
            let rule = SchemaRule(key: pattern, type: .any, file: "test")
            let patternNames = pattern.split(separator: ".", omittingEmptySubsequences: false)
            let star = patternNames.firstIndex(of: "*") ?? 0
            for _ in 0..<2_000 {
                let names = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                    parts.randomElement(using: &random) ?? ""
                }
                let name = names.joined(separator: ".")
                // The reference: the names before and after the star match, one or more non-empty names between.
                let before = patternNames[..<star].map(String.init)
                let after = patternNames[(star + 1)...].map(String.init)
                let expected =
                    names.count > before.count + after.count && Array(names.prefix(before.count)) == before
                    && Array(names.suffix(after.count)) == after
                    && !names[before.count..<(names.count - after.count)].contains("")
                #expect(rule.covers(name) == expected, "\(pattern) against '\(name)'")
            }
        }
    }
}
