import Testing

@testable import SettingsGNOME
@testable import SettingsStore

@Suite("GLib keyfiles: an app's settings file read, changed and written back as GLib would")
struct GLibKeyfileTests {
    /// A keyfile with everything GLib keeps: comments, blank lines, spaces around `=`, a
    /// translation, a key twice, CRLF lines, groups settingsd does not own, no final line break.
    static let untouched =
        "# Written by hand\n\n[org/gnome/TextEditor]\nstyle-scheme='Adwaita-dark'\n  indent-width = 4\n"
        + "name[de]=Texteditor\nstyle-scheme='classic'\n\n# kept\n[org/other/App]\r\nshown=true\r\n\n"
        + "[Desktop Entry]\nName=Not a setting"

    @Test("an unchanged keyfile writes back byte for byte, and reads as GLib reads it")
    func roundTrip() throws {
        let keyfile = try GLibKeyfile(text: Self.untouched)
        #expect(keyfile.text == Self.untouched)
        #expect(keyfile.value(group: "org/gnome/TextEditor", key: "style-scheme") == "'classic'")
        #expect(keyfile.value(group: "org/gnome/TextEditor", key: "indent-width") == "4")
        #expect(keyfile.value(group: "org/other/App", key: "shown") == "true")
        #expect(keyfile.entries.count == 5)
        for text in ["", "\n", "[a]\n", "# only a comment"] {
            #expect(try GLibKeyfile(text: text).text == text)
        }
    }

    @Test("a change rewrites only its line; a new key ends its group, a new group ends the file")
    func edits() throws {
        var keyfile = try GLibKeyfile(text: Self.untouched)
        keyfile.set("8", group: "org/gnome/TextEditor", key: "indent-width")
        keyfile.set("true", group: "org/gnome/TextEditor", key: "show-grid")
        keyfile.set("'x'", group: "org/new/App", key: "mode")
        keyfile.remove(group: "org/other/App", key: "shown")
        keyfile.set("'one'", group: "org/gnome/TextEditor", key: "style-scheme")
        let expected =
            "# Written by hand\n\n[org/gnome/TextEditor]\nindent-width=8\n"
            + "name[de]=Texteditor\nstyle-scheme='one'\nshow-grid=true\n\n# kept\n[org/other/App]\r\n\n"
            + "[Desktop Entry]\nName=Not a setting\n\n[org/new/App]\nmode='x'"
        #expect(keyfile.text == expected)
        #expect(
            try GLibKeyfile(text: keyfile.text).entries.map(\.key) == [
                "indent-width", "name[de]", "style-scheme", "show-grid", "Name", "mode",
            ])
        var empty = GLibKeyfile()
        empty.set("1", group: "a/b", key: "k")
        #expect(empty.text == "[a/b]\nk=1\n")
    }

    @Test("what GLib would not read is refused with its line; nothing is guessed")
    func hostile() {
        let cases: [(String, String)] = [
            ("[unclosed\nk=1\n", "line 1"),
            ("[a]\njust words\n", "line 2"),
            ("k=1\n[a]\n", "line 1"),
            ("[a]\n=value\n", "line 2"),
            ("[]\n", "line 1"),
            ("[a]b]\n", "line 1"),
        ]
        for (text, line) in cases {
            #expect {
                _ = try GLibKeyfile(text: text)
            } throws: { error in
                (error as? SettingsError)?.code == .invalidValue
                    && (error as? SettingsError)?.message.hasPrefix(line) == true
            }
        }
    }
}
