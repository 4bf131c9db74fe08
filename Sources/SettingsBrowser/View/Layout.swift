/// Where each part of the screen goes at a size: the title bar on the first row, the tree on the
/// left and the details on the right of the body, the prompt or message line and the key hints
/// at the bottom. An 80 × 24 terminal gets a 34-column tree and a 45-column detail pane.
package struct Layout: Equatable, Sendable {
    /// The terminal's columns.
    package let columns: Int
    /// The terminal's rows.
    package let rows: Int

    /// The layout of a `columns` × `rows` terminal (at least 40 × 10 is drawn as such).
    package init(columns: Int, rows: Int) {
        self.columns = max(columns, 1)
        self.rows = max(rows, 1)
    }

    /// The first row of the body.
    package var bodyTop: Int { 1 }
    /// The rows of the body.
    package var bodyHeight: Int { max(rows - 3, 1) }
    /// The row of the prompt or message.
    package var promptRow: Int { rows - 2 }
    /// The row of the key hints.
    package var hintRow: Int { rows - 1 }
    /// The tree's width: a little under half, never under 24 nor more than 60 columns.
    package var treeWidth: Int {
        guard columns >= 48 else { return columns }
        return min(max(columns * 43 / 100, 24), 60)
    }
    /// The detail pane's first column (after the tree and a separator).
    package var detailColumn: Int { treeWidth + 1 }
    /// The detail pane's width (0 when the terminal is too narrow for one).
    package var detailWidth: Int { max(columns - detailColumn, 0) }
}
