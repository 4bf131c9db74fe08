/// How many terminal cells text takes, and text made safe to show: what a terminal would read
/// as a control (an escape, a newline, a bell in a value) is shown as `\u{…}`-style text instead,
/// so no value or key name can move the cursor or change the terminal's state.
package enum DisplayWidth {
    /// The cells `character` takes: 2 for East Asian wide and emoji, 0 for a combining mark
    /// alone, else 1.
    package static func of(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            let category = scalar.properties.generalCategory
            return category == .nonspacingMark || category == .enclosingMark ? 0 : 1
        }
    }

    /// The cells `text` takes.
    package static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` with every control character (C0, DEL, C1) and line or paragraph separator
    /// written out as `\n`, `\t` or `\u{1B}`, so it draws on one line and does nothing else.
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}"
            || scalar == "\u{2029}"
    }
}
