import Foundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

@Suite("dconf files: import and export of dconf dump's keyfiles")
struct DconfFileTests {
    /// Values GNOME users have, set through gsettings so that each is what its schema says.
    static let gsettingsValues: [(schema: String, key: String, value: String)] = [
        ("org.gnome.desktop.interface", "gtk-theme", "'Adwaita-dark'"),
        ("org.gnome.desktop.interface", "color-scheme", "'prefer-dark'"),
        ("org.gnome.desktop.interface", "text-scaling-factor", "1.25"),
        ("org.gnome.desktop.interface", "cursor-size", "32"),
        ("org.gnome.desktop.interface", "clock-show-seconds", "true"),
        ("org.gnome.desktop.interface", "font-name", "'Cantarell \"Bold\" 11'"),
        ("org.gnome.desktop.session", "idle-delay", "uint32 600"),
        (
            "org.gnome.desktop.input-sources", "sources",
            "[('xkb', 'us'), ('xkb', 'de+neo'), ('ibus', 'mozc-jp')]"
        ),
        ("org.gnome.desktop.input-sources", "xkb-options", "['ctrl:nocaps', 'compose:ralt']"),
        ("org.gnome.desktop.wm.keybindings", "close", "['<Super>q', '<Alt>F4']"),
        ("org.gnome.desktop.wm.keybindings", "minimize", "@as []"),
        ("org.gnome.desktop.background", "picture-uri", "'file:///home/me/Pictures/été 😀.png'"),
        ("org.gnome.system.proxy", "mode", "'manual'"),
        ("org.gnome.system.proxy.http", "port", "8080"),
        ("org.gnome.desktop.peripherals.mouse", "speed", "-0.5"),
    ]

    /// Keys no installed schema types, written straight to dconf: their annotations must survive.
    static let untypedValues: [(path: String, value: String)] = [
        ("/com/example/app/tuple", "<(uint32 2, 'ABC')>"),
        ("/com/example/app/maybe", "@ms nothing"),
        ("/com/example/app/empty", "@as []"),
        ("/com/example/app/bytes", "b'abc'"),
        ("/com/example/app/nested", "<<7>>"),
        ("/com/example/app/quote", "\"it's\""),
        ("/com/example/app/negative", "int64 -9000000000"),
        ("/com/example/app/small", "byte 0x07"),
        ("/com/example/app/dict", "{'a': <uint32 2>, 'b': <1>}"),
        ("/com/example/app/layout", "[{'org.gnome.Contacts.desktop': <{'position': <0>}>}]"),
        ("/com/example/App.v2/size", "(1200, 800)"),
        ("/top-level", "3.5"),
    ]

    @Test("gsettings values → dconf dump → import → export → dconf load → dconf dump, byte for byte")
    func roundTripThroughDconf() async throws {
        try #require(
            DconfSession.isAvailable && GSettingsSchemaTests.hasInstalledSchemas,
            "dconf, dbus or schemas missing")
        let directory = TemporaryDirectory()
        let session = try await DconfSession(directory)
        for (schema, key, value) in Self.gsettingsValues {
            let result = session.gsettings("set", schema, key, value)
            try #require(result.status == 0, "gsettings set \(schema) \(key) \(value): \(result.error)")
        }
        for (path, value) in Self.untypedValues {
            try #require(session.dconf("write", path, value).status == 0)
        }
        let dump = session.dconf("dump", "/").output
        #expect(dump.contains("idle-delay=uint32 600"))

        let daemon = try DaemonProcess(directory, arguments: ["--schemas", installedGSettingsSchemas])
        let imported = daemon.cli("import", "--format", "dconf", "-", input: dump)
        try #require(imported.status == 0, "\(imported.error)")
        #expect(daemon.cli("get", "org.gnome.desktop.session.idle-delay").output == "600\n")
        #expect(daemon.cli("get", "system.proxy.http.port").output == "8080\n")
        let exported = daemon.cli("export", "--format", "dconf", "-")
        #expect(exported.status == 0, "\(exported.error)")
        #expect(exported.output == dump)

        // Into a fresh dconf database: the same dump comes back out.
        #expect(session.dconf("reset", "-f", "/").status == 0)
        #expect(session.dconf("dump", "/").output.isEmpty)
        #expect(session.dconf("load", "/", input: exported.output).status == 0)
        #expect(session.dconf("dump", "/").output == dump)
    }

    @Test("A dump loaded at a dir, exported from it, and --replace removing what the file lacks under it")
    func importAtADirAndReplace() throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        #expect(daemon.cli("set", "org.gnome.desktop.interface.stale", "old").status == 0)
        #expect(daemon.cli("set", "org.gnome.desktop.kept-outside", "x").status == 0)
        #expect(daemon.cli("set", "ui.theme", "dark").status == 0)
        let file = "[/]\ntheme='light'\n\n[interface]\ngtk-theme='Adwaita'\ncursor-size=24\n"
        let merged = daemon.cli("import", "--format", "dconf", "/org/gnome/desktop/", "-", input: file)
        #expect(merged.status == 0, "\(merged.error)")
        #expect(daemon.cli("get", "org.gnome.desktop.interface.gtk-theme").output == "Adwaita\n")
        #expect(daemon.cli("get", "org.gnome.desktop.interface.stale").output == "old\n")
        // dconf load only merges; --replace also removes keys under the dir that the file lacks.
        let replaced = daemon.cli(
            "import", "--format", "dconf", "--replace", "/org/gnome/desktop/interface/", "-",
            input: "[/]\ngtk-theme='HighContrast'\n")
        #expect(replaced.status == 0, "\(replaced.error)")
        #expect(daemon.cli("get", "org.gnome.desktop.interface.stale").status != 0)
        #expect(daemon.cli("get", "org.gnome.desktop.interface.cursor-size").status != 0)
        #expect(daemon.cli("get", "org.gnome.desktop.kept-outside").output == "x\n")
        #expect(daemon.cli("get", "ui.theme").output == "dark\n")
        let exported = daemon.cli("export", "--format", "dconf", "/org/gnome/desktop/", "-")
        #expect(
            exported.output
                == "[/]\nkept-outside='x'\ntheme='light'\n\n[interface]\ngtk-theme='HighContrast'\n")
    }

    @Test("A malformed keyfile or value is refused with its line, and nothing is imported")
    func malformedFilesAreRefusedWhole() throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        let cases: [(file: String, message: String)] = [
            ("[a]\ngood=1\nbad=[1, 'x']\n", "line 3"),
            ("key=1\n", "before any [group]"),
            ("[a]\nno equals sign\n", "line 2"),
            ("[a]\nk='open\n", "line 2"),
            ("[a//b]\nk=1\n", "line 2"),
        ]
        for (file, message) in cases {
            let result = daemon.cli("import", "--format", "dconf", "-", input: file)
            #expect(result.status != 0, "\(file)")
            #expect(result.error.contains(message), "\(file): \(result.error)")
        }
        #expect(daemon.cli("list").output.isEmpty)
        // A value of the wrong type for a typed key is refused too.
        let schemas = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        try #"{"format": "settingsd-schema", "version": 1, "keys": {"a.n": {"gvariant": "u"}}}"#
            .write(toFile: schemas + "/a.json", atomically: true, encoding: .utf8)
        let typed = try DaemonProcess(TemporaryDirectory(), arguments: ["--schemas", schemas])
        #expect(
            typed.cli("import", "--format", "dconf", "-", input: "[a]\nn=-1\n").error.contains("line 2: a.n"))
        #expect(typed.cli("import", "--format", "dconf", "-", input: "[a]\nn=7\n").status == 0)
        #expect(typed.cli("export", "--format", "dconf", "-").output == "[a]\nn=uint32 7\n")
    }

    @Test("Keys that dconf's format cannot hold are skipped and named; the rest is written")
    func exportSkipsWhatAKeyfileCannotHold() throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        #expect(daemon.cli("set", "a.when", "--type", "date", "2026-01-01T00:00:00Z").status == 0)
        #expect(daemon.cli("set", "a.b=c", "x").status == 0)
        #expect(daemon.cli("set", "a.fine", "--type", "gvariant", "uint16 9").status == 0)
        let exported = daemon.cli("export", "--format", "dconf", "-")
        #expect(exported.status == 0)
        #expect(exported.output == "[a]\nfine=uint16 9\n")
        #expect(exported.error.contains("a.when") && exported.error.contains("a.b=c"))
    }
}
