import Foundation
import SettingsStore
import Testing

/// The GSettings schemas installed on this machine (Debian's gsettings-desktop-schemas).
let installedGSettingsSchemas = "/usr/share/glib-2.0/schemas"

@Suite("GSettings schema files")
struct GSettingsSchemaTests {
    static var hasInstalledSchemas: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: installedGSettingsSchemas)) ?? [])
            .contains { $0.hasSuffix(".gschema.xml") }
    }

    @Test("Every installed schema loads: each key typed exactly, each default accepted by its own rule")
    func installedSchemasLoad() throws {
        try #require(Self.hasInstalledSchemas, "gsettings-desktop-schemas is not installed")
        let schemas = GSettingsSchemas(directories: [installedGSettingsSchemas])
        #expect(schemas.failedFiles.isEmpty, "\(schemas.failedFiles)")
        let declared = try FileManager.default.contentsOfDirectory(atPath: installedGSettingsSchemas)
            .filter { $0.hasSuffix(".gschema.xml") }
            .map { try String(contentsOfFile: "\(installedGSettingsSchemas)/\($0)", encoding: .utf8) }
            .map { $0.components(separatedBy: "<key ").count - 1 }.reduce(0, +)
        // Every declared key becomes a rule (children placed under a parent add more).
        #expect(schemas.rules.count >= declared, "\(schemas.rules.count) rules for \(declared) keys")
        for rule in schemas.rules {
            #expect(rule.gvariantType != nil, "\(rule.key)")
            if let value = rule.defaultValue { try rule.check(value, forKey: rule.key) }
        }
        let keysWithNotes = Set(schemas.notes.compactMap(\.key))
        let defaultsLost = schemas.notes.filter { $0.message.hasPrefix("the default") }
        #expect(defaultsLost.isEmpty, "\(defaultsLost)")
        print(
            "GSettings coverage: \(schemas.rules.count) rules from \(declared) keys; \(schemas.rules.count - keysWithNotes.count) exact, \(keysWithNotes.count) with a reported loss"
        )
        // Known shapes land where GSettings puts them.
        let policySchema = try SettingsSchema(rules: schemas.rules)
        #expect(policySchema.rule(forKey: "system.proxy.mode")?.choices?.contains("manual") == true)
        #expect(policySchema.rule(forKey: "org.gnome.desktop.interface.gtk-theme")?.defaultValue == "Adwaita")
        #expect(policySchema.rule(forKey: "system.proxy.http.port")?.maximum == 65535)
        // A relocatable schema, under the path of the schema its id extends.
        #expect(
            policySchema.rule(forKey: "org.gnome.desktop.app-folders.folders.Utilities.apps")?.gvariantType
                == .array(.string))
    }

    @Test("Each value gsettings accepts for an installed key is accepted, each it refuses refused")
    func acceptsExactlyWhatGSettingsAccepts() throws {
        try #require(
            Self.hasInstalledSchemas && GLibOracle.isAvailable, "GLib's oracle needs python3-gi and schemas")
        let schema = try SettingsSchema(
            rules: GSettingsSchemas(directories: [installedGSettingsSchemas]).rules)
        let verdicts = try #require(try GLibOracle.ask([.init(differential: true)]).first?.rows)
        #expect(verdicts.count > 2000)
        var disagreements: [String] = []
        for verdict in verdicts {
            let key = try DconfPath.key(forPath: verdict.path + verdict.key)
            guard let rule = schema.rule(forKey: key), let type = rule.gvariantType else {
                disagreements.append("\(key): no rule")
                continue
            }
            #expect(type.description == verdict.type, "\(key)")
            let ours = Result { () throws -> Void in
                try rule.check(try GVariant(parsing: verdict.text, type: type).settingValue(), forKey: key)
            }
            let accepted = (try? ours.get()) != nil
            if accepted != verdict.accepted {
                disagreements.append(
                    "\(key) = \(verdict.text): gsettings \(verdict.accepted ? "accepts" : "refuses"), settingsd \(accepted ? "accepts" : "refuses")"
                )
            }
        }
        #expect(
            disagreements.isEmpty, "\(disagreements.count) of \(verdicts.count): \(disagreements.prefix(20))")
    }
}
