/// Moving through the tree: rows, selection, scrolling, folders, and the selected key's details.
extension Browser {
    /// The tree drawn: the search's results while one is applied, else every key.
    var shownTree: KeyTree { state.searchTree ?? catalog.tree }

    /// Lays the rows out again, keeping the selection (or the row where it was) and the scroll.
    func rebuildRows() {
        let previousIndex = state.selectedIndex
        state.rows =
            state.searchTree.map { $0.rows(expanded: [], expandingAll: true) }
            ?? catalog.tree.rows(expanded: state.expanded)
        if state.selectedIndex == nil {
            if let previousIndex, !state.rows.isEmpty {
                state.selection = state.rows[min(previousIndex, state.rows.count - 1)].path
                loadDetail()
            } else {
                state.selection = state.rows.first?.path
            }
        }
        scrollToSelection()
    }

    /// Selects `path` and reads its details.
    func select(_ path: String) {
        let changed = state.selection != path
        state.selection = path
        if changed || state.detail?.key != path {
            state.focus = .tree
            loadDetail()
        }
        scrollToSelection()
    }

    /// Moves the selection by `offset` rows.
    func move(by offset: Int) {
        guard !state.rows.isEmpty else { return }
        let index = min(max((state.selectedIndex ?? 0) + offset, 0), state.rows.count - 1)
        select(state.rows[index].path)
    }

    /// Scrolls as little as keeps the selection in view.
    func scrollToSelection() {
        let height = layout.bodyHeight
        let index = state.selectedIndex ?? 0
        if index < state.top { state.top = index }
        if index >= state.top + height { state.top = index - height + 1 }
        state.top = max(0, min(state.top, max(state.rows.count - height, 0)))
    }

    /// Opens the selected folder; on an open one, goes to its first child.
    func openSelection() {
        guard let path = state.selection, let node = shownTree.node(path), node.isFolder else { return }
        if state.search == nil, !state.expanded.contains(path) {
            state.expanded.insert(path)
            rebuildRows()
        } else if let first = shownTree.children(of: path).first {
            select(first.path)
        }
    }

    /// Closes the selected folder; on a closed one or a key, goes to its parent.
    func closeSelection() {
        guard let path = state.selection else { return }
        if state.search == nil, state.expanded.contains(path) {
            state.expanded.remove(path)
            rebuildRows()
        } else if let parent = shownTree.parent(of: path) {
            select(parent)
        }
    }

    /// Shows `path` in the whole tree: the search cleared, the folders above it open.
    func reveal(_ path: String) {
        clearSearch()
        for ancestor in catalog.tree.ancestors(of: path) { state.expanded.insert(ancestor) }
        rebuildRows()
        select(path)
        // Centred, so what is around it shows too.
        if let index = state.selectedIndex {
            state.top = max(
                0, min(index - layout.bodyHeight / 2, max(state.rows.count - layout.bodyHeight, 0)))
        }
    }

    /// Reads the selected key's description and history.
    func loadDetail() {
        state.historySelection = 0
        guard let path = state.selection, shownTree.node(path)?.isKey == true else {
            state.detail = nil
            return
        }
        var detail = BrowserState.Detail(key: path)
        do {
            detail.description = try source.describe(path)
            detail.history = try source.history(path)
        } catch {
            detail.error = error.message
        }
        state.detail = detail
    }

    /// Applies `query` as the search (an empty one clears it).
    func applySearch(_ query: String) {
        guard !query.isEmpty else {
            clearSearch()
            rebuildRows()
            return
        }
        // Typing on narrows the results so far (all the values in, and none changed since).
        let narrowed = state.search.map { query.lowercased().firstRange(of: $0.lowercased()) != nil } == true
        let candidates = narrowed && !catalog.isTakingValues ? state.searchTree?.keys : nil
        state.search = query
        state.searchTree = KeyTree(keys: catalog.keys(matching: query, among: candidates))
        state.top = 0
        rebuildRows()
        if state.selectedIndex == nil || state.searchTree?.node(state.selection ?? "")?.isKey != true,
            let firstKey = state.rows.first(where: { state.searchTree?.node($0.path)?.isKey == true })
        {
            select(firstKey.path)
        }
    }

    /// Drops the search.
    func clearSearch() {
        state.search = nil
        state.searchTree = nil
    }
}
