/// The whole screen for a state: the title bar, the body (the tree and details, the sync view
/// or the help), the prompt or message line and the key hints.
package struct BrowserView {
    /// The state drawn.
    package var state: BrowserState
    /// The keys.
    package var catalog: KeyCatalog
    /// What the browser reads: a socket or a database file.
    package var location: String
    /// Whether writes are refused (a database file opened read-only).
    package var isReadOnly: Bool
    /// Whether changes from others arrive live.
    package var isLive: Bool

    /// The frame of `layout`'s size at `now` (highlights end with time).
    package func frame(_ layout: Layout, now: ContinuousClock.Instant) -> Frame {
        var frame = Frame(columns: layout.columns, rows: layout.rows)
        drawTitle(layout, into: &frame)
        switch state.screen {
        case .keys:
            let tree = state.searchTree ?? catalog.tree
            TreePane.draw(state, tree: tree, catalog: catalog, layout: layout, now: now, into: &frame)
            DetailPane.draw(state, tree: tree, catalog: catalog, layout: layout, into: &frame)
        case .sync:
            SyncPane.draw(
                state.status, problem: state.connectionProblem, location: location, layout: layout,
                into: &frame)
        case .help:
            HelpPane.draw(layout: layout, into: &frame)
        }
        drawPrompt(layout, into: &frame)
        drawHints(layout, into: &frame)
        return frame
    }

    private func drawTitle(_ layout: Layout, into frame: inout Frame) {
        frame.fill(row: 0, style: .reversed)
        frame.put(" settingsd browse", row: 0, column: 0, style: CellStyle(isBold: true, isReversed: true))
        var right = "\(catalog.count) keys"
        if let search = state.search {
            right = "\(state.searchTree?.count ?? 0) of \(right) match '\(search)'"
        }
        if catalog.isTakingValues, catalog.count > 0 {
            right += " · values \(catalog.valuesAsked * 100 / catalog.count)%"
        }
        if state.isStaging || !state.staged.isEmpty { right += " · staging \(state.staged.count)" }
        right +=
            isReadOnly
            ? " · read-only" : isLive ? (state.connectionProblem == nil ? " · live" : " · offline") : ""
        right += " "
        let width = DisplayWidth.of(right)
        frame.put(right, row: 0, column: max(layout.columns - width, 18), style: .reversed)
    }

    private func drawPrompt(_ layout: Layout, into frame: inout Frame) {
        let row = layout.promptRow
        guard row > 0 else { return }
        switch state.prompt {
        case .search(let editor): drawEditor("/", editor, row: row, into: &frame)
        case .jump(let editor): drawEditor("go to: ", editor, row: row, into: &frame)
        case .edit(let key, let editor): drawEditor("\(key) = ", editor, row: row, into: &frame)
        case .confirm(let question, _):
            frame.put("\(question) (y/n)", row: row, column: 0, style: .bold)
        case nil:
            if let message = state.message {
                frame.put(message.text, row: row, column: 0, style: message.isError ? .tone(.error) : .plain)
            } else if !state.staged.isEmpty {
                frame.put(
                    "\(state.staged.count) staged: w writes them in one transaction, x drops them", row: row,
                    column: 0, style: .tone(.staged))
            }
        }
    }

    /// A prompt and its text, scrolled so the cursor shows; the cursor is the reversed cell.
    private func drawEditor(_ label: String, _ editor: LineEditor, row: Int, into frame: inout Frame) {
        let start = frame.put(label, row: row, column: 0, style: .bold)
        let room = max(frame.columns - start - 1, 1)
        let first = max(0, editor.cursor - room + 1)
        let visible = String(editor.text.dropFirst(first).prefix(room))
        frame.put(visible, row: row, column: start)
        let cursorColumn = start + DisplayWidth.of(String(editor.text[first..<editor.cursor]))
        if cursorColumn < frame.columns {
            frame.restyle(row: row, column: cursorColumn, width: 1, style: .reversed)
        }
    }

    private func drawHints(_ layout: Layout, into frame: inout Frame) {
        let row = layout.hintRow
        guard row > 0 else { return }
        frame.fill(row: row, style: .reversed)
        // While a prompt holds the line above, a refusal shows here.
        if state.prompt != nil, let message = state.message {
            frame.put(
                " " + message.text, row: row, column: 0,
                style: message.isError ? CellStyle.tone(.error).reversed : .reversed)
            return
        }
        let hints: String =
            switch (state.screen, state.prompt) {
            case (_, .search?): " type to search  Enter keeps it  Esc clears"
            case (_, .jump?): " a key or folder path  Tab completes  Enter goes  Esc cancels"
            case (_, .edit?): " Enter writes  Esc cancels  Ctrl-U clears"
            case (_, .confirm?): " y yes  n no"
            case (.sync, _): " s or Esc back  q quit"
            case (.help, _): " any key back"
            case (.keys, nil):
                state.focus == .history
                    ? " ↑↓ choose  Enter revert  Tab back  q quit"
                    : " ↑↓←→ move  / search  : go to  e edit  d delete  Tab history  ? help  q quit"
            }
        frame.put(hints, row: row, column: 0, style: .reversed)
    }
}
