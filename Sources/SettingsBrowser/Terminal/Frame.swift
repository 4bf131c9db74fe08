/// One screen's worth of cells, drawn into by the views and written out by `FrameWriter`, which
/// sends only the rows that differ from the frame before.
package struct Frame: Equatable, Sendable {
    /// One cell: a character and its style; the cell after a wide character is a continuation.
    package struct Cell: Equatable, Sendable {
        /// The character, or nil for the right half of a wide one.
        package var character: Character?
        /// How it is drawn.
        package var style: CellStyle

        static let blank = Cell(character: " ", style: .plain)
    }

    /// The columns of each row.
    package let columns: Int
    /// The rows.
    package let rows: Int
    /// The cells, row by row.
    package private(set) var cells: [[Cell]]

    /// A blank frame of `columns` × `rows` cells.
    package init(columns: Int, rows: Int) {
        self.columns = max(columns, 1)
        self.rows = max(rows, 1)
        cells = Array(repeating: Array(repeating: .blank, count: self.columns), count: self.rows)
    }

    /// Writes `text` at `row` from `column`, clipped to `width` cells (to the row's end when nil);
    /// controls in it are shown as text. Returns the column after the last cell written.
    @discardableResult
    package mutating func put(
        _ text: String, row: Int, column: Int, width: Int? = nil, style: CellStyle = .plain
    ) -> Int {
        guard (0..<rows).contains(row), column < columns, column >= 0 else { return column }
        let limit = min(columns, column + (width ?? columns))
        var at = column
        for character in DisplayWidth.printable(text) {
            let cells = DisplayWidth.of(character)
            if cells == 0 { continue }
            guard at + cells <= limit else { break }
            // A wide character cut in half by this one leaves a blank, never a stray half.
            if self.cells[row][at].character == nil, at > 0 { self.cells[row][at - 1] = .blank }
            let last = at + cells - 1
            if last + 1 < columns, self.cells[row][last + 1].character == nil {
                self.cells[row][last + 1] = .blank
            }
            self.cells[row][at] = Cell(character: character, style: style)
            if cells == 2 { self.cells[row][at + 1] = Cell(character: nil, style: style) }
            at += cells
        }
        return at
    }

    /// Fills `width` cells of `row` from `column` with spaces of `style`.
    package mutating func fill(row: Int, column: Int = 0, width: Int? = nil, style: CellStyle) {
        guard (0..<rows).contains(row), column >= 0 else { return }
        let end = min(columns, column + (width ?? columns))
        guard column < end else { return }
        for at in column..<end { cells[row][at] = Cell(character: " ", style: style) }
    }

    /// Gives every cell of `row` from `column` on, over `width` cells, `style` (the text stays).
    package mutating func restyle(row: Int, column: Int = 0, width: Int? = nil, style: CellStyle) {
        guard (0..<rows).contains(row), column >= 0 else { return }
        let end = min(columns, column + (width ?? columns))
        guard column < end else { return }
        for at in column..<end { cells[row][at].style = style }
    }

    /// The text of `row`, as a terminal shows it (trailing spaces kept).
    package func text(ofRow row: Int) -> String {
        String(cells[row].compactMap(\.character))
    }

    /// The whole frame as text, one line per row with trailing spaces removed.
    package var text: String {
        (0..<rows).map { row in
            var line = text(ofRow: row)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
