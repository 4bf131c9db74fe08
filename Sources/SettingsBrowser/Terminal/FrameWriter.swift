/// Writes frames to a terminal as escape sequences: the first whole, then only the rows that
/// changed, each with its styles as SGR attributes. Colours follow `NO_COLOR` and the terminal:
/// without them, each tone becomes an attribute every terminal has (bold, underline).
package struct FrameWriter: Sendable {
    /// Whether tones are drawn as colours.
    package let usesColor: Bool
    private var previous: Frame?

    /// A writer; `usesColor` false draws tones as attributes only.
    package init(usesColor: Bool) {
        self.usesColor = usesColor
    }

    /// Whether a terminal of `environment` should get colours: not when `NO_COLOR` is set to
    /// anything (no-color.org), nor on a `dumb` or monochrome (`*-m`, `*mono*`) terminal.
    package static func usesColor(environment: [String: String]) -> Bool {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        let terminal = environment["TERM"] ?? ""
        return
            !(terminal.isEmpty || terminal == "dumb" || terminal.hasSuffix("-m")
            || terminal.firstRange(of: "mono") != nil)
    }

    /// Forgets the frame on screen, so the next is written whole (after a resize or a suspend).
    package mutating func invalidate() {
        previous = nil
    }

    /// The bytes that turn the screen from the last frame written into `frame`.
    package mutating func bytes(for frame: Frame) -> [UInt8] {
        var output = ""
        let whole = previous.map { $0.columns != frame.columns || $0.rows != frame.rows } ?? true
        if whole { output += "\u{1B}[0m\u{1B}[2J" }
        for row in 0..<frame.rows {
            if !whole, let previous, previous.cells[row] == frame.cells[row] { continue }
            output += "\u{1B}[\(row + 1);1H"
            var current = CellStyle.plain
            output += "\u{1B}[0m"
            for cell in frame.cells[row] {
                guard let character = cell.character else { continue }
                if cell.style != current {
                    output += sgr(cell.style)
                    current = cell.style
                }
                output.append(character)
            }
            output += "\u{1B}[0m"
        }
        previous = frame
        return Array(output.utf8)
    }

    /// The SGR sequence for `style`, from a reset.
    private func sgr(_ style: CellStyle) -> String {
        var codes = ["0"]
        var bold = style.isBold
        var underline = style.isUnderlined
        if let tone = style.tone {
            if usesColor {
                codes.append(Self.color(tone))
            } else {
                switch tone {
                case .accent, .locked: bold = true
                case .changed, .staged, .error: underline = true
                case .muted: break
                }
            }
        }
        if bold { codes.append("1") }
        if underline { codes.append("4") }
        if style.isReversed { codes.append("7") }
        return "\u{1B}[\(codes.joined(separator: ";"))m"
    }

    /// A foreground colour of the 8 every colour terminal has, or dim for muted text.
    private static func color(_ tone: CellStyle.Tone) -> String {
        switch tone {
        case .accent: "36"
        case .changed: "33"
        case .error: "31"
        case .muted: "2"
        case .locked: "35"
        case .staged: "32"
        }
    }
}
