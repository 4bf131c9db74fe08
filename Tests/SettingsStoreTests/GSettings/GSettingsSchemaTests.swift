import Foundation
import SettingsStore
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

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

@Suite("GSettings through the CLI: schema check, describe, set, import-dconf-db")
struct GSettingsCommandTests {
    @Test(
        "a relocatable schema that holds itself (valid for GLib) is placed once, its cycle noted, and checked at once"
    )
    func recursiveSchema() throws {
        let folder = TemporaryDirectory()
        let children = (1...4).map { "<child name='n\($0)' schema='org.example.node'/>" }.joined()
        try """
        <schemalist>
          <schema id='org.example.root' path='/org/example/'><child name='tree' schema='org.example.node'/></schema>
          <schema id='org.example.node'><key name='k' type='i'><default>0</default></key>\(children)</schema>
        </schemalist>
        """.write(toFile: folder.file("org.example.gschema.xml"), atomically: true, encoding: .utf8)
        let started = Date()
        let schemas = GSettingsSchemas(directories: [folder.path])
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(schemas.rules.contains { $0.key == "org.example.tree.k" })
        #expect(schemas.notes.contains { $0.message.contains("a cycle") }, "\(schemas.notes)")
        let checked = DaemonProcess.run(["schema", "check", folder.path])
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(checked.error.contains("a cycle"), "\(checked.error)")
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory, arguments: ["--schemas", folder.path])
        #expect(daemon.cli("set", "org.example.tree.k", "3").status == 0)
    }

    @Test("schema check reports a folder's and a file's coverage, and describe shows the GVariant type")
    func checkAndDescribe() throws {
        try #require(GSettingsSchemaTests.hasInstalledSchemas, "gsettings-desktop-schemas is not installed")
        let folder = DaemonProcess.run(["schema", "check", installedGSettingsSchemas])
        #expect(folder.status == 0, "\(folder.error)")
        #expect(folder.error.contains("kept exactly"))
        let file = DaemonProcess.run([
            "schema", "check", "\(installedGSettingsSchemas)/org.gnome.system.proxy.gschema.xml",
        ])
        #expect(file.status == 0, "\(file.error)")
        #expect(file.error.contains("rule(s)"))
        let broken = TemporaryDirectory()
        try "<schemalist><schema id='x' path='/x/'><key name='k' type='i'></schema></schemalist>"
            .write(toFile: broken.file("x.gschema.xml"), atomically: true, encoding: .utf8)
        let refused = DaemonProcess.run(["schema", "check", broken.file("x.gschema.xml")])
        #expect(refused.status != 0)
        #expect(refused.error.contains("x.gschema.xml:1"), "\(refused.error)")

        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory, arguments: ["--schemas", installedGSettingsSchemas])
        let described = daemon.cli("describe", "org.gnome.desktop.session.idle-delay")
        #expect(described.output.contains("type: int (GVariant 'u')"), "\(described.output)")
        // GSettings' own bounds, on every path: a 32-bit unsigned integer.
        #expect(daemon.cli("set", "org.gnome.desktop.session.idle-delay", "70000000000").status != 0)
        #expect(daemon.cli("set", "org.gnome.desktop.session.idle-delay", "300").status == 0)
        // An array typed by GSettings reads as GVariant text, as gsettings takes it.
        #expect(
            daemon.cli("set", "org.gnome.desktop.input-sources.xkb-options", "['ctrl:nocaps']").status == 0)
        #expect(
            daemon.cli("get", "org.gnome.desktop.input-sources.xkb-options").output == "[\"ctrl:nocaps\"]\n")
        #expect(daemon.cli("set", "org.gnome.desktop.input-sources.xkb-options", "[1]").status == 64)
        #expect(daemon.cli("set", "org.gnome.desktop.interface.color-scheme", "purple").status != 0)
    }

    @Test("import-dconf-db turns a site's dconf keyfiles and locks into defaults.d and locks.d")
    func importDconfDatabase() throws {
        try #require(GSettingsSchemaTests.hasInstalledSchemas, "gsettings-desktop-schemas is not installed")
        let directory = TemporaryDirectory()
        let database = directory.file("local.d")
        try FileManager.default.createDirectory(
            atPath: database + "/locks", withIntermediateDirectories: true)
        try "[org/gnome/desktop/interface]\ngtk-theme='HighContrast'\n\n[com/example]\nn=uint32 3\n"
            .write(toFile: database + "/00-site", atomically: true, encoding: .utf8)
        try "/org/gnome/desktop/interface/gtk-theme\n/org/gnome/desktop/background/\n"
            .write(toFile: database + "/locks/site", atomically: true, encoding: .utf8)
        let system = directory.file("etc")
        let result = DaemonProcess.run(["schema", "import-dconf-db", database, system])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("is a dir"), "\(result.error)")
        #expect(FileManager.default.fileExists(atPath: system + "/defaults.d/60-dconf-local.json"))
        let daemon = try DaemonProcess(
            directory, arguments: ["--schemas", installedGSettingsSchemas, "--system-dir", system])
        #expect(daemon.cli("get", "org.gnome.desktop.interface.gtk-theme").output == "HighContrast\n")
        #expect(
            daemon.cli("set", "org.gnome.desktop.interface.gtk-theme", "Adwaita").error.contains("locked"))
        #expect(daemon.cli("get", "com.example.n", "--json").output == "{\"$gvariant\":\"u\",\"$value\":3}\n")
        #expect(daemon.cli("export", "--format", "dconf", "/com/", "-").output.isEmpty)
    }
}

@Suite("GVariant rules in the library and through sync")
struct GVariantRuleTests {
    static func policy(_ directory: TemporaryDirectory, _ rules: String) throws -> SettingsPolicy {
        let folder = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"format": "settingsd-schema", "version": 1, "keys": {\#(rules)}}"#
            .write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        return try SettingsPolicy.load(schemaDirectories: [folder], systemDirectory: nil, extensions: .gnome)
    }

    @Test(
        "A JSON rule's gvariant type bounds integers, shapes tuples and types elements; a wrong pairing is refused"
    )
    func jsonRulesTakeGVariantTypes() throws {
        let directory = TemporaryDirectory()
        var configuration = SettingsConfiguration()
        configuration.policy = try Self.policy(
            directory,
            #""n.u": {"gvariant": "u"}, "n.pair": {"gvariant": "(ii)"}, "n.flags": {"gvariant": "as", "choices": ["a", "b"]}, "n.*.size": {"gvariant": "(ii)"}"#
        )
        let settings = Settings(inMemoryWith: configuration)
        try settings.set(4_294_967_295, forKey: "n.u")
        #expect(throws: SettingsError.self) { try settings.set(4_294_967_296, forKey: "n.u") }
        #expect(throws: SettingsError.self) { try settings.set(-1, forKey: "n.u") }
        try settings.set([1, 2], forKey: "n.pair")
        #expect(throws: SettingsError.self) { try settings.set([1, 2, 3], forKey: "n.pair") }
        #expect(throws: SettingsError.self) {
            try settings.set(SettingValue.array([1, "2"]), forKey: "n.pair")
        }
        try settings.set(["a", "b", "a"], forKey: "n.flags")
        let refused = #expect(throws: SettingsError.self) { try settings.set(["a", "c"], forKey: "n.flags") }
        #expect(refused?.message.contains("made of 'a', 'b'") == true, "\(refused?.message ?? "")")
        // A '*' between names covers one or more of them.
        #expect(throws: SettingsError.self) { try settings.set([1], forKey: "n.window.main.size") }
        try settings.set([640, 480], forKey: "n.window.main.size")
        let mismatch = #expect(throws: SettingsError.self) {
            try Self.policy(TemporaryDirectory(), #""x": {"type": "string", "gvariant": "u"}"#)
        }
        #expect(mismatch?.message.contains("held as int") == true, "\(mismatch?.message ?? "")")
        #expect(throws: SettingsError.self) {
            try Self.policy(TemporaryDirectory(), #""x": {"gvariant": "a{vs}"}"#)
        }
    }

    @Test("A replica's value that breaks a GVariant rule is refused on arrival as schemaViolation")
    func arrivalsObeyGVariantRules() async throws {
        var configuration = SettingsConfiguration()
        configuration.policy = try Self.policy(
            TemporaryDirectory(), #""n.pair": {"gvariant": "(ii)"}, "n.u": {"gvariant": "u"}"#)
        let typed = Settings(inMemoryWith: configuration)
        let free = Settings(inMemoryWith: .init())
        let events = Mutex<[SettingsChange]>([])
        let token = typed.observe(.all) { change in events.withLock { $0.append(change) } }
        defer { token.cancel() }
        try free.set([1, 2, 3], forKey: "n.pair")
        try free.set(7, forKey: "n.u")
        let link = InProcessLink(typed, free)
        try await waitUntil { typed.value(forKey: "n.u") == 7 }
        try await waitUntil {
            events.withLock { $0.contains { $0.reason == .schemaViolation && $0.keys == ["n.pair"] } }
        }
        #expect(typed.value(forKey: "n.pair") == nil)
        _ = link
    }
}
