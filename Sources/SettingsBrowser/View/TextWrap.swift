/// Text broken into lines of at most a width of cells, at spaces where it can and anywhere where
/// a word is longer than a line.
package enum TextWrap {
    /// The lines of `text` (its own line breaks kept) no wider than `width` cells.
    package static func lines(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = DisplayWidth.printable(String(word))
                var wordWidth = DisplayWidth.of(word)
                if lineWidth > 0, lineWidth + 1 + wordWidth > width {
                    lines.append(line)
                    line = ""
                    lineWidth = 0
                }
                while wordWidth > width {
                    var head = ""
                    var headWidth = 0
                    while let first = word.first,
                        headWidth + DisplayWidth.of(first) <= width - lineWidth - (lineWidth > 0 ? 1 : 0)
                    {
                        head.append(first)
                        headWidth += DisplayWidth.of(first)
                        word.removeFirst()
                    }
                    if head.isEmpty {
                        lines.append(line)
                        line = ""
                        lineWidth = 0
                        continue
                    }
                    lines.append(lineWidth > 0 ? line + " " + head : head)
                    line = ""
                    lineWidth = 0
                    wordWidth = DisplayWidth.of(word)
                }
                if lineWidth > 0 {
                    line += " "
                    lineWidth += 1
                }
                line += word
                lineWidth += wordWidth
            }
            lines.append(line)
        }
        return lines
    }
}
