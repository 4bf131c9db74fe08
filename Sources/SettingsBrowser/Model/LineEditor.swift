/// The one-line editor of the search, jump and edit prompts: a text and a cursor, moved and
/// edited by the keys a shell's line editing has (arrows, Home/End, Ctrl-A/E, Ctrl-U/K/W).
package struct LineEditor: Equatable, Sendable {
    /// The text.
    package private(set) var text: [Character]
    /// Where the next character goes, from 0 to `text.count`.
    package private(set) var cursor: Int

    /// An editor holding `text`, the cursor at its end.
    package init(_ text: String = "") {
        self.text = Array(text)
        cursor = self.text.count
    }

    /// The text as a string.
    package var string: String { String(text) }

    /// Applies `key`; returns whether it was an editing key (others are the prompt's to handle).
    package mutating func apply(_ key: KeyPress) -> Bool {
        switch key {
        case .character(let character):
            text.insert(character, at: cursor)
            cursor += 1
        case .backspace:
            guard cursor > 0 else { return true }
            cursor -= 1
            text.remove(at: cursor)
        case .delete, .control("d"):
            if cursor < text.count { text.remove(at: cursor) }
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(text.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = text.count
        case .control("u"):
            text.removeFirst(cursor)
            cursor = 0
        case .control("k"): text.removeLast(text.count - cursor)
        case .control("w"):
            var start = cursor
            while start > 0, text[start - 1] == " " { start -= 1 }
            while start > 0, text[start - 1] != " " { start -= 1 }
            text.removeSubrange(start..<cursor)
            cursor = start
        default: return false
        }
        return true
    }
}
