import SettingsStore

/// The tree of keys: one row per key or folder, indented by depth, a folder with ▸ or ▾ and its
/// number of keys, a key with its value. The first two columns mark where the value comes from
/// (`*` the user's, `s` a system default, `r` recommended by policy, `P` mandatory policy, `L`
/// locked, `+` a staged change, blank a default) and whether the key stays on this machine (`~`).
package enum TreePane {
    /// Draws the rows of `state` from its `top` into `frame`.
    package static func draw(
        _ state: BrowserState, tree: KeyTree, catalog: KeyCatalog, layout: Layout,
        now: ContinuousClock.Instant,
        into frame: inout Frame
    ) {
        let width = layout.treeWidth
        let height = layout.bodyHeight
        if state.rows.isEmpty {
            let text = state.search.map { "no key matches '\($0)'" } ?? "no keys"
            frame.put(text, row: layout.bodyTop, column: 2, width: width - 2, style: .tone(.muted))
            return
        }
        for offset in 0..<height {
            let index = state.top + offset
            guard index < state.rows.count else { break }
            let row = state.rows[index]
            guard let node = tree.node(row.path) else { continue }
            let screenRow = layout.bodyTop + offset
            let isSelected = row.path == state.selection
            let isHighlighted = state.highlighted.contains { key, until in
                until > now
                    && (key == row.path || (!node.isKey || node.isFolder) && key.hasPrefix(row.path + "."))
            }
            draw(
                node, depth: row.depth, state: state, catalog: catalog,
                isOpen: state.search != nil
                    || state.expanded.contains(row.path), width: width, row: screenRow, into: &frame)
            if isHighlighted {
                frame.restyle(row: screenRow, column: 0, width: width, style: .tone(.changed))
            }
            if isSelected {
                let style: CellStyle = state.focus == .tree && state.screen == .keys ? .reversed : .bold
                for column in 0..<width {
                    var cellStyle = frame.cells[screenRow][column].style
                    if style.isReversed { cellStyle.isReversed = true } else { cellStyle.isBold = true }
                    frame.restyle(row: screenRow, column: column, width: 1, style: cellStyle)
                }
            }
        }
    }

    /// One row: marks, indent, arrow, name, and the value or the count.
    private static func draw(
        _ node: KeyTree.Node, depth: Int, state: BrowserState, catalog: KeyCatalog, isOpen: Bool, width: Int,
        row: Int, into frame: inout Frame
    ) {
        let entry = node.isKey ? catalog.entry(node.path) : nil
        let staged = node.isKey ? state.stagedChange(of: node.path) : nil
        let mark: Character = staged != nil ? "+" : entry?.origin.mark ?? " "
        let markStyle: CellStyle =
            staged != nil ? .tone(.staged) : entry?.origin.isHeld == true ? .tone(.locked) : .tone(.accent)
        frame.put(String(mark), row: row, column: 0, width: 1, style: markStyle)
        frame.put(entry?.isLocal == true ? "~" : " ", row: row, column: 1, width: 1, style: .tone(.muted))
        let indent = min(depth * 2, max(width - 12, 0))
        var column = 3 + indent
        if node.isFolder {
            column = frame.put(
                isOpen ? "▾ " : "▸ ", row: row, column: column, width: width - column, style: .tone(.muted))
        } else {
            column += 2
        }
        column = frame.put(
            node.name.isEmpty ? "(empty)" : node.name, row: row, column: column, width: width - column)
        guard column + 2 < width else { return }
        if node.isFolder {
            let count = "\(node.keyCount)"
            frame.put(
                count, row: row, column: max(width - count.count - 1, column + 2), width: count.count,
                style: .tone(.muted))
            return
        }
        let value: String
        let style: CellStyle
        if let staged {
            value = staged.value.map(KeyEntry.text) ?? "(reset)"
            style = .tone(.staged)
        } else {
            value = entry?.valueText ?? ""
            style = entry?.origin == .user ? .plain : .tone(.muted)
        }
        frame.put(value, row: row, column: column + 2, width: width - column - 3, style: style)
    }
}
