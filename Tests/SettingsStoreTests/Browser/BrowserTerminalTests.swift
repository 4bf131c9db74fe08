import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore

/// `settingsd browse` in a real terminal: tmux runs it against a real daemon; the tests type with
/// `send-keys` and read the screen with `capture-pane`. Some screens are checked in as text
/// (`Browser/Screens/`), so a change of layout shows in review; set `SETTINGSD_UPDATE_SCREENS=1`
/// to write them again.
@Suite("Browser: settingsd browse in a real terminal", .timeLimit(.minutes(2)))
struct BrowserTerminalTests {
    let directory = TemporaryDirectory()

    /// A daemon with the example schemas (summaries, ranges, choices, a local pattern) and a name
    /// of its own, so screens read the same on every machine.
    private func daemon(_ arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(
            directory, arguments: ["--schemas", exampleSchemaDirectory, "--name", "browse-test"] + arguments)
    }

    /// A terminal running `settingsd browse` on `daemon`, once its first screen is drawn.
    private func browse(
        _ daemon: DaemonProcess, columns: Int = 80, rows: Int = 24,
        environment: [String: String] = ["NO_COLOR": "1"]
    ) async throws -> TmuxTerminal {
        let terminal = try TmuxTerminal(directory, columns: columns, rows: rows, environment: environment)
        try terminal.runCommand(
            "\(SettingsdBinary.path) browse --socket \(daemon.socket); echo browse-exit-$?")
        try await terminal.awaitText("keys · live")
        return terminal
    }

    /// The screen with what changes from run to run (times, the socket) replaced by names.
    private func normalized(_ screen: String, socket: String) -> String {
        screen.replacing(/\d\d-\d\d \d\d:\d\d:\d\d/, with: "MM-DD hh:mm:ss").replacing(socket, with: "SOCKET")
    }

    /// Checks `screen` against the checked-in screen `name`.
    private func expectScreen(_ screen: String, _ name: String, socket: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Screens/\(name).txt"
        ).path
        let text = normalized(screen, socket: socket)
        if ProcessInfo.processInfo.environment["SETTINGSD_UPDATE_SCREENS"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == expected, "the screen '\(name)' changed; it now reads:\n\(text)")
    }

    /// The terminal is the shell's again: the normal screen, the cursor shown, no mouse
    /// reports, line editing and echo on, and the shell answers.
    private func expectShellIntact(_ terminal: TmuxTerminal, _ tag: String) async throws {
        try await terminal.awaitText("browse-exit-")
        #expect(try terminal.pane("#{alternate_on}") == "0")
        #expect(try terminal.pane("#{cursor_flag}") == "1")
        #expect(try terminal.pane("#{mouse_any_flag}") == "0")
        try terminal.runCommand(
            "clear; stty -a | tr ' ' '\\n' | grep -x -e -echo -e -icanon -e -isig -e -opost | wc -l | sed 's/^/raw-flags-/'; echo \(tag)"
        )
        let screen = try await terminal.awaitScreen { $0.contains("\n\(tag)") }
        #expect(screen.contains("raw-flags-0"), "\(screen)")
    }

    @Test("the first screen, a key's details with its history, and the help read as checked in")
    func screensAsCheckedIn() async throws {
        let daemon = try daemon()
        for (key, value) in [
            ("ui.font.size", "14"), ("ui.font.size", "16"), ("audio.volume", "0.8"),
            ("window.main.width", "900"),
            ("app.name", "settingsd browser"),
        ] {
            #expect(daemon.cli("set", key, value).status == 0)
        }
        let terminal = try await browse(daemon)
        try expectScreen(try terminal.screen(), "start", socket: daemon.socket)
        try terminal.type(":")
        try terminal.type("ui.font.size")
        try terminal.press("Enter")
        let detail = try await terminal.awaitText("Text size in points")
        try expectScreen(detail, "key-detail", socket: daemon.socket)
        try terminal.type("?")
        try expectScreen(try await terminal.awaitText("Marks"), "help", socket: daemon.socket)
        try terminal.press("Escape")
        try terminal.type(":")
        try terminal.type("window.main.width")
        try terminal.press("Enter")
        let local = try await terminal.awaitText("local: stays on this machine")
        #expect(local.contains("*~       width  \"900\""), "\(local)")
        let colours = try terminal.screenWithAttributes().matches(of: /[\[;]3[0-7][m;]/)
        #expect(colours.isEmpty, "NO_COLOR leaves colours out")
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-q")
    }

    @Test("the README's screen and the guide's are what the browser draws (times aside, blank rows cut)")
    func readmeScreen() async throws {
        let daemon = try DaemonProcess(
            directory, arguments: ["--schemas", exampleSchemaDirectory, "--name", "laptop"])
        for (key, value) in [
            ("ui.font.size", "14"), ("ui.theme", "dark"), ("audio.volume", "0.7"), ("ui.font.size", "13"),
            ("window.main.width", "1280"), ("app.name", "Notes"),
        ] {
            #expect(daemon.cli("set", key, value).status == 0)
        }
        let terminal = try await browse(daemon)
        try terminal.type(":")
        try terminal.type("ui.font.size")
        try terminal.press("Enter")
        let screen = try await terminal.awaitText("Text size in points")
        // The rows that hold nothing but the pane's border are left out of the documents.
        let drawn = screen.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.contains("│") && $0.allSatisfy { $0 == " " || $0 == "│" }) }
            .joined(separator: "\n").trimmingCharacters(in: .newlines)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for document in ["README.md", "docs/guides/browser.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            let start = try #require(text.firstRange(of: "```text\n settingsd browse"), "\(document)")
            let end = try #require(text[start.upperBound...].firstRange(of: "\n```"))
            let shown = String(text[text.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
            #expect(
                normalized(shown, socket: daemon.socket) == normalized(drawn, socket: daemon.socket),
                "\(document)'s screen differs from the browser's:\n\(drawn)")
        }
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-readme")
    }

    @Test(
        "search, an invalid edit refused with its reason, a valid one written, and a revert from the history")
    func searchEditRevert() async throws {
        let daemon = try daemon()
        #expect(daemon.cli("set", "audio.volume", "0.8").status == 0)
        let terminal = try await browse(daemon)
        try terminal.type("/")
        try terminal.type("VOLUME")
        try await terminal.awaitText("match 'VOLUME'")
        try terminal.press("Enter")
        let found = try await terminal.awaitText("volume  0.8")
        #expect(found.contains("The master output volume"), "the summary and description show: \(found)")
        try terminal.type("e")
        try terminal.press("C-u")
        try terminal.type("2")
        try terminal.press("Enter")
        let refused = try await terminal.awaitText("refused:")
        #expect(refused.contains("audio.volume = 2"), "the edit line stays open: \(refused)")
        #expect(daemon.cli("get", "audio.volume").output == "0.8\n")
        try terminal.press("C-u")
        try terminal.type("0.3")
        try terminal.press("Enter")
        try await terminal.awaitText("wrote audio.volume = 0.3")
        #expect(daemon.cli("get", "audio.volume").output == "0.3\n")
        try terminal.press("Tab")
        try await terminal.awaitText("History (Enter reverts, Tab back)")
        try terminal.type("j")
        try terminal.press("Enter")
        try await terminal.awaitText("revert audio.volume to 0.8? (y/n)")
        try terminal.type("y")
        try await terminal.awaitText("reverted audio.volume to 0.8")
        #expect(daemon.cli("get", "audio.volume").output == "0.8\n")
        try terminal.press("C-c")
        try await expectShellIntact(terminal, "after-ctrl-c")
    }

    @Test(
        "a change made with the CLI appears at once, highlighted, with the selection and scroll kept; a resize redraws"
    )
    func liveChangesAndResize() async throws {
        let daemon = try daemon()
        let client = try daemon.client()
        for index in 0..<60 {
            try client.set(.integer(Int64(index)), forKey: "bulk.k\(index < 10 ? "0" : "")\(index)")
        }
        let terminal = try await browse(daemon)
        try terminal.type(":")
        try terminal.type("bulk.k40")
        try terminal.press("Enter")
        let before = try await terminal.awaitText("value     40")
        let row = try #require(
            before.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                $0.contains("k40  40")
            })
        let top = before.split(separator: "\n", omittingEmptySubsequences: false)[1]
        #expect(daemon.cli("set", "bulk.k40", "4000").status == 0)
        let after = try await terminal.awaitText("k40  4000")
        let lines = after.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[row].contains("k40  4000"), "the row stays where it was:\n\(after)")
        #expect(lines[1] == top, "the scroll position stays:\n\(after)")
        #expect(after.contains("value     4000"), "the details follow the change")
        let styled = try terminal.screenWithAttributes().split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(
            styled[row].contains("\u{1B}[4") || styled[row].contains(";4m"),
            "highlighted (underlined without colour)")
        #expect(styled[row].contains("7m"), "still selected (reversed)")
        try terminal.resize(columns: 120, rows: 40)
        let wide = try await terminal.awaitScreen { screen in
            screen.split(separator: "\n", omittingEmptySubsequences: false).count >= 40
                && screen.split(separator: "\n").first.map { $0.count > 100 } == true
        }
        #expect(wide.contains("k40  4000"))
        try terminal.resize(columns: 80, rows: 24)
        try await terminal.awaitScreen { $0.split(separator: "\n").first.map { $0.count < 81 } == true }
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-resize")
    }

    @Test("staged edits are written together with w, one refused by the schema is never staged")
    func stagedEdits() async throws {
        let daemon = try daemon()
        let terminal = try await browse(daemon)
        try terminal.type("t")
        try await terminal.awaitText("staging 0")
        for (key, value) in [("ui.font.size", "20"), ("ui.font.size", "500"), ("ui.theme", "dark")] {
            try terminal.type(":")
            try terminal.press("C-u")
            try terminal.type(key)
            try terminal.press("Enter")
            try await terminal.awaitText("value ")
            try terminal.type("e")
            try terminal.press("C-u")
            try terminal.type(value)
            try terminal.press("Enter")
            if value == "500" {
                try await terminal.awaitText("refused:")
                try terminal.press("Escape")
            } else {
                try await terminal.awaitText("staged \(key)")
            }
        }
        try await terminal.awaitText("staging 2")
        #expect(daemon.cli("get", "ui.theme").output == "light\n", "nothing is written before w")
        try terminal.type("w")
        try await terminal.awaitText("wrote 2 changes in one transaction")
        #expect(daemon.cli("get", "ui.font.size").output == "20\n")
        #expect(daemon.cli("get", "ui.theme").output == "dark\n")
        let history = daemon.cli("history", "--json")
        #expect(history.status == 0)
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-staging")
    }

    @Test("SIGTERM and a crash give the terminal back as it was (on a colour terminal)")
    func signalsRestoreTheTerminal() async throws {
        let daemon = try daemon()
        for signal in ["TERM", "SEGV"] {
            let terminal = try await browse(daemon, environment: [:])
            let colours = try terminal.screenWithAttributes().matches(of: /[\[;]3[0-7][m;]/)
            #expect(!colours.isEmpty, "a colour terminal without NO_COLOR gets colours")
            let shell = try terminal.pane("#{pane_pid}")
            let browser = DaemonProcess.run(["-P", shell, "-f", "browse"], through: "/usr/bin/pgrep").output
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!browser.isEmpty)
            _ = DaemonProcess.run(["-\(signal)", browser], through: "/bin/kill")
            try await expectShellIntact(terminal, "after-\(signal)")
        }
    }

    @Test("a database file no daemon holds is browsed read-only; an edit is refused with the reason")
    func readOnlyFile() async throws {
        let database = directory.file("alone.sqlite")
        do {
            let settings = try Settings(path: database)
            try settings.set("kept", forKey: "notes.title")
            settings.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let terminal = try TmuxTerminal(directory, environment: ["NO_COLOR": "1"])
        try terminal.runCommand("\(SettingsdBinary.path) browse --db \(database); echo browse-exit-$?")
        try await terminal.awaitText("read-only")
        try terminal.type(":")
        try terminal.type("notes.title")
        try terminal.press("Enter")
        try await terminal.awaitText("value     \"kept\"")
        try terminal.type("e")
        try await terminal.awaitText("the file is open read-only")
        try terminal.press("Escape")
        try await terminal.awaitScreen { !$0.contains("the file is open read-only") }
        try terminal.type("d")
        try await terminal.awaitText("the file is open read-only")
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-db")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
    }

    @Test("the sync view shows a peer with its state and agreement")
    func syncView() async throws {
        let other = try DaemonProcess(TemporaryDirectory(), arguments: ["--name", "other-machine"])
        let daemon = try daemon(["--peer", other.socket])
        let terminal = try await browse(daemon)
        try terminal.type("s")
        let screen = try await terminal.awaitText("connected")
        #expect(screen.contains("Sync — \(daemon.socket)"))
        #expect(screen.contains("other-machine"), "\(screen)")
        #expect(screen.contains("replica   browse-test"))
        try terminal.press("Escape")
        try await terminal.awaitText("keys · live")
        try terminal.type("q")
        try await expectShellIntact(terminal, "after-sync")
    }

    @Test("without a terminal, browse says so and exits 1")
    func needsATerminal() {
        let result = DaemonProcess.run(["browse", "--socket", directory.file("none.sock")])
        #expect(result.status == 1)
        #expect(result.error.contains("needs a terminal"), "\(result.error)")
    }
}
