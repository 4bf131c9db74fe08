import Testing

@testable import SettingsBrowser

@Suite("Browser: frames, their text and what reaches the terminal")
struct FrameTests {
    @Test("no control character in a value or key reaches the terminal: each is shown as text")
    func controlsAreShownAsText() {
        var frame = Frame(columns: 60, rows: 2)
        frame.put("evil\u{1B}]0;title\u{07}\u{1B}[2J\nnext\u{9B}31m", row: 0, column: 0)
        var writer = FrameWriter(usesColor: false)
        let bytes = writer.bytes(for: frame)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(frame.text(ofRow: 0).hasPrefix(#"evil\u{1B}]0;title\u{7}\u{1B}[2J\nnext\u{9B}31m"#))
        // The only escapes written are the writer's own: cursor moves, erases and attributes.
        for scalar in text.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            #expect(scalar == "\u{1B}")
        }
        #expect(!bytes.contains(0x07))
    }

    @Test("wide characters take two cells and are never cut in half; text stops at its width")
    func wideCharacters() {
        var frame = Frame(columns: 10, rows: 1)
        let end = frame.put("日本語テキスト", row: 0, column: 0, width: 7)
        #expect(end == 6)
        #expect(frame.text(ofRow: 0) == "日本語    ")
        frame.put("ab", row: 0, column: 1)
        // 日 and 本 each lost a half: both leave a blank.
        #expect(frame.text(ofRow: 0) == " ab 語    ")
        for text in ["a😀b", "e\u{301}x", "\u{2028}"] {
            var line = Frame(columns: 8, rows: 1)
            line.put(text, row: 0, column: 0)
            #expect(DisplayWidth.of(line.text(ofRow: 0)) == 8, "\(text)")
        }
    }

    @Test("after the first frame only the rows that changed are written")
    func writesOnlyChangedRows() {
        var writer = FrameWriter(usesColor: true)
        var frame = Frame(columns: 20, rows: 5)
        frame.put("first", row: 0, column: 0)
        let first = String(decoding: writer.bytes(for: frame), as: UTF8.self)
        #expect(first.contains("\u{1B}[2J"))
        frame.put("third", row: 2, column: 0, style: .tone(.changed))
        let second = String(decoding: writer.bytes(for: frame), as: UTF8.self)
        #expect(second.hasPrefix("\u{1B}[3;1H"))
        #expect(!second.contains("\u{1B}[1;1H") && !second.contains("\u{1B}[2J"))
        #expect(second.contains("33"))
        #expect(writer.bytes(for: frame).isEmpty)
    }

    @Test("NO_COLOR, a dumb or a monochrome terminal get attributes, not colours")
    func monochrome() {
        #expect(FrameWriter.usesColor(environment: ["TERM": "xterm-256color"]))
        #expect(!FrameWriter.usesColor(environment: ["TERM": "xterm-256color", "NO_COLOR": "1"]))
        #expect(!FrameWriter.usesColor(environment: ["TERM": "dumb"]))
        #expect(!FrameWriter.usesColor(environment: ["TERM": "vt100-m"]))
        var writer = FrameWriter(usesColor: false)
        var frame = Frame(columns: 10, rows: 1)
        for tone in [CellStyle.Tone.accent, .changed, .error, .locked, .staged] {
            frame.put("x", row: 0, column: 0, style: .tone(tone))
            let text = String(decoding: writer.bytes(for: frame), as: UTF8.self)
            #expect(!text.contains(";3") && !text.contains("[3"), "\(tone)")
            #expect(text.contains(";1m") || text.contains(";4m"), "\(tone)")
        }
    }

    @Test("wrapped text is never wider than asked, and loses no word")
    func wrapping() {
        var generator = SystemRandomNumberGenerator()
        let words = ["a", "settings", "schema-default", "日本語", "x" + String(repeating: "y", count: 40)]
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0...20, using: &generator)).map { _ in
                words.randomElement(using: &generator) ?? ""
            }.joined(separator: " ")
            let width = Int.random(in: 4...30, using: &generator)
            let lines = TextWrap.lines(text, width: width)
            for line in lines { #expect(DisplayWidth.of(line) <= width, "\(line) in \(width)") }
            #expect(lines.joined().filter { $0 != " " } == text.filter { $0 != " " })
        }
    }

    @Test("the line editor edits as a shell's line does")
    func lineEditor() {
        var editor = LineEditor("hello world")
        let edited = editor.apply(.control("w"))
        #expect(edited)
        #expect(editor.string == "hello ")
        _ = editor.apply(.home)
        _ = editor.apply(.character(">"))
        _ = editor.apply(.end)
        _ = editor.apply(.backspace)
        #expect(editor.string == ">hello")
        _ = editor.apply(.left)
        _ = editor.apply(.control("k"))
        #expect(editor.string == ">hell")
        _ = editor.apply(.control("u"))
        #expect(editor.string == "" && editor.cursor == 0)
        let handledEnter = editor.apply(.enter)
        #expect(!handledEnter)
    }
}
