import SettingsStore

/// Changes from other processes and machines, the sync view's state, and a daemon that went away.
extension Browser {
    /// Takes the changes the watch delivered: their keys are read again and highlighted, the
    /// selection and scroll position stay.
    func receiveChanges() {
        let changes: [SettingsChange]
        do {
            changes = try source.arrivedChanges()
        } catch {
            lose(error)
            return
        }
        guard !changes.isEmpty else { return }
        if changes.contains(where: { $0.reason == .resync }) {
            reload()
            return
        }
        let keys = Set(changes.flatMap { $0.changes.map(\.key) })
        let until = clock.now + Self.highlightTime
        for key in keys { state.highlighted[key] = until }
        if keys.count > Self.describeLimit { reload() } else { refresh(keys) }
    }

    /// Reads `keys` again and lays the rows out again.
    func refresh(_ keys: Set<String>) {
        for key in keys {
            do {
                catalog.update(try source.describe(key))
            } catch {
                state.message = ("cannot read \(key): \(error.message)", true)
            }
        }
        relayout(reloadingDetailOf: keys)
    }

    /// Reads every key again.
    func reload() {
        do {
            catalog = try source.catalog()
        } catch {
            state.message = ("cannot read the keys: \(error.message)", true)
        }
        relayout(reloadingDetailOf: nil)
    }

    /// The search run again, the rows laid out again, the details read again when their key changed.
    private func relayout(reloadingDetailOf keys: Set<String>?) {
        if let search = state.search {
            state.searchTree = KeyTree(keys: catalog.keys(matching: search))
        }
        rebuildRows()
        if let selection = state.selection, keys?.contains(selection) ?? true {
            let focus = state.focus
            let chosen = state.historySelection
            loadDetail()
            state.focus = focus == .history && state.detail?.history.isEmpty == false ? .history : .tree
            state.historySelection = min(chosen, max((state.detail?.history.count ?? 1) - 1, 0))
        }
    }

    /// Reads the keys drawn that have not been read since they last changed: what each holds
    /// and where that comes from, as `describe` says.
    func describeVisibleKeys() {
        guard state.screen == .keys, !state.rows.isEmpty else { return }
        let before = catalog.count
        let end = min(state.top + layout.bodyHeight, state.rows.count)
        for row in state.rows[min(state.top, end)..<end] where !catalog.isDescribed(row.path) {
            guard catalog.tree.contains(row.path) else { continue }
            do {
                catalog.update(try source.describe(row.path))
            } catch {
                state.message = ("cannot read \(row.path): \(error.message)", true)
                break
            }
        }
        // A key gone between the listing and its description leaves the tree.
        if catalog.count != before { rebuildRows() }
    }

    /// Takes the values of the next keys in the background, for the search; a search applied
    /// meanwhile runs again once they are all in.
    func takeValues() {
        let keys = catalog.nextKeysToTake(limit: Self.valuesPerRequest)
        guard !keys.isEmpty else { return }
        do {
            catalog.take(try source.values(forKeys: keys))
        } catch {
            state.message = ("cannot read values for the search: \(error.message)", true)
        }
        if !catalog.isTakingValues, let search = state.search { applySearch(search) }
    }

    /// Reads the replica's state for the sync view, and again in a second while it shows.
    func refreshStatus() {
        do {
            state.status = try source.status()
            if source.changeDescriptor != nil || reconnect == nil { state.connectionProblem = nil }
        } catch {
            lose(error)
        }
        nextStatus = state.screen == .sync ? clock.now + .seconds(1) : nil
    }

    /// The daemon went away: say so, keep what is shown, and try it again every second.
    private func lose(_ error: SettingsError) {
        state.connectionProblem = "the daemon went away (\(error.message)); trying again"
        source.stopWatching()
        nextReconnect = clock.now + .seconds(1)
    }

    /// Opens the source again; everything is read again once it answers.
    func tryReconnecting() {
        guard let reconnect else {
            nextReconnect = nil
            return
        }
        do {
            source = try reconnect()
            state.connectionProblem = nil
            nextReconnect = nil
            reload()
            state.message = ("the daemon is back", false)
        } catch {
            nextReconnect = clock.now + .seconds(1)
        }
    }
}
