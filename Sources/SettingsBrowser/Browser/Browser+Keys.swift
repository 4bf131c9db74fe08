/// What each key does, screen by screen (see `HelpPane` for the list people read).
extension Browser {
    /// Handles one key press.
    func handle(_ key: KeyPress) {
        if key == .control("c") {
            isRunning = false
            return
        }
        if state.prompt != nil {
            handlePrompt(key)
            return
        }
        state.message = nil
        switch key {
        case .control("l"):
            writer.invalidate()
            return
        case .control("z"):
            terminal.suspend()
            writer.invalidate()
            return
        default: break
        }
        switch state.screen {
        case .help:
            state.screen = .keys
        case .sync:
            switch key {
            case .character("q"): askToQuit()
            case .character("s"), .escape, .enter:
                state.screen = .keys
                nextStatus = nil
            default: break
            }
        case .keys:
            if state.focus == .history { handleHistoryKey(key) } else { handleTreeKey(key) }
        }
    }

    private func handleTreeKey(_ key: KeyPress) {
        switch key {
        case .up, .character("k"): move(by: -1)
        case .down, .character("j"): move(by: 1)
        case .pageUp, .control("b"): move(by: -(layout.bodyHeight - 1))
        case .pageDown, .control("f"), .character(" "): move(by: layout.bodyHeight - 1)
        case .home, .character("g"): move(by: -state.rows.count)
        case .end, .character("G"): move(by: state.rows.count)
        case .right, .character("l"): openSelection()
        case .left, .character("h"): closeSelection()
        case .enter:
            if let path = state.selection, shownTree.node(path)?.isFolder == true,
                shownTree.node(path)?.isKey != true
            {
                if state.expanded.contains(path) { closeSelection() } else { openSelection() }
            } else {
                beginEdit()
            }
        case .character("e"): beginEdit()
        case .character("d"), .delete: beginDelete()
        case .tab:
            if let detail = state.detail, detail.key == state.selection, !detail.history.isEmpty {
                state.focus = .history
                state.historySelection = 0
            }
        case .character("/"): state.prompt = .search(LineEditor(state.search ?? ""))
        case .character(":"): state.prompt = .jump(LineEditor())
        case .character("t"):
            state.isStaging.toggle()
            state.message = (
                state.isStaging
                    ? "staging: edits and deletions wait for w, which writes them in one transaction"
                    : "writing each change at once"
                        + (state.staged.isEmpty ? "" : "; \(state.staged.count) still staged"),
                false
            )
        case .character("w"): writeStaged()
        case .character("x"):
            if !state.staged.isEmpty {
                state.message = ("dropped \(state.staged.count) staged changes", false)
                state.staged.removeAll()
            }
        case .character("s"):
            state.screen = .sync
            refreshStatus()
        case .character("?"): state.screen = .help
        case .character("q"): askToQuit()
        case .escape:
            if state.search != nil {
                clearSearch()
                rebuildRows()
            }
        case .mouse(let event): handleMouse(event)
        default: break
        }
    }

    private func handleHistoryKey(_ key: KeyPress) {
        let count = state.detail?.history.count ?? 0
        switch key {
        case .up, .character("k"): state.historySelection = max(state.historySelection - 1, 0)
        case .down, .character("j"):
            state.historySelection = min(state.historySelection + 1, max(count - 1, 0))
        case .tab, .backTab, .escape, .left, .character("h"): state.focus = .tree
        case .enter, .character("r"): beginRevert()
        case .character("q"): askToQuit()
        default: break
        }
    }

    private func handleMouse(_ event: MouseEvent) {
        switch event.action {
        case .wheelUp: move(by: -3)
        case .wheelDown: move(by: 3)
        case .press:
            let index = state.top + event.row - layout.bodyTop
            guard event.column < layout.treeWidth, event.row >= layout.bodyTop,
                event.row < layout.bodyTop + layout.bodyHeight, index < state.rows.count
            else { return }
            let path = state.rows[index].path
            if path == state.selection, shownTree.node(path)?.isFolder == true {
                if state.expanded.contains(path) { closeSelection() } else { openSelection() }
            } else {
                select(path)
            }
        }
    }

    /// Quits, or asks first when staged changes would be lost.
    func askToQuit() {
        if state.staged.isEmpty {
            isRunning = false
        } else {
            state.prompt = .confirm("quit and drop \(state.staged.count) staged changes?", .quit)
        }
    }
}
