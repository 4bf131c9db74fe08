import SettingsDaemonClient
import SettingsStore

/// Changing keys: edit, delete, reset a folder, revert to a history record, and staging several
/// changes to write in one transaction. A refusal (the schema's, a lock's, a read-only file's)
/// shows its reason and changes nothing.
extension Browser {
    /// Opens the edit line on the selected key, unless something holds it.
    func beginEdit() {
        guard let key = state.selection, shownTree.node(key)?.isKey == true, let entry = catalog.entry(key)
        else { return }
        if let refusal = refusal(toChange: entry) {
            state.message = (refusal, true)
            return
        }
        let current = state.stagedChange(of: key).map(\.value) ?? entry.value
        state.prompt = .edit(key: key, LineEditor(EditableText.text(of: current, rule: entry.rule)))
    }

    /// Writes (or stages) `text` as `key`'s value; a refusal keeps the line open with its reason.
    func finishEdit(_ key: String, text: String) {
        do {
            if state.isStaging {
                let entry = catalog.entry(key)
                let value = try EditableText.value(
                    of: text, forKey: key, rule: entry?.rule, current: entry?.value)
                try entry?.rule?.check(value, forKey: key)
                stage(SettingWrite(key: key, value: value))
                state.message = ("staged \(key) = \(KeyEntry.text(value))", false)
            } else {
                try source.set(text: text, forKey: key)
                refresh([key])
                state.message = ("wrote \(key) = \(catalog.entry(key)?.valueText ?? text)", false)
            }
            state.prompt = nil
        } catch {
            state.message = ("refused: \(error.message)", true)
        }
    }

    /// Deletes the selected key (asking first), or resets the selected folder's keys.
    func beginDelete() {
        guard let path = state.selection, let node = shownTree.node(path) else { return }
        if node.isKey, let entry = catalog.entry(path) {
            if let refusal = refusal(toChange: entry) {
                state.message = (refusal, true)
            } else if state.isStaging {
                stage(SettingWrite(key: path, value: nil))
                state.message = ("staged: \(path) back to its default", false)
            } else if entry.origin != .user {
                state.message = ("\(path) holds no value of the user's: it is at its default already", false)
            } else {
                state.prompt = .confirm("delete \(path), back to its default?", .delete(path))
            }
        } else if source.isReadOnly {
            state.message = (readOnlyRefusal, true)
        } else {
            state.prompt = .confirm(
                "reset the \(node.keyCount) keys under \(path). to their defaults?", .resetFolder(path))
        }
    }

    /// Asks before reverting the selected key to the chosen history record.
    func beginRevert() {
        guard let detail = state.detail, detail.history.indices.contains(state.historySelection) else {
            return
        }
        let record = detail.history[state.historySelection]
        if let entry = catalog.entry(detail.key), let refusal = refusal(toChange: entry) {
            state.message = (refusal, true)
            return
        }
        let value =
            record.isRedacted ? "its secret value" : record.value.map(KeyEntry.text) ?? "nothing (deleted)"
        state.prompt = .confirm("revert \(detail.key) to \(value)?", .revert(detail.key, record))
    }

    /// Does what a question was answered yes to.
    func carryOut(_ action: BrowserState.Confirmed) {
        do {
            switch action {
            case .quit:
                isRunning = false
            case .delete(let key):
                try source.delete(key)
                refresh([key])
                state.message = ("deleted \(key)", false)
            case .resetFolder(let path):
                let count = try source.reset(path + ".")
                reload()
                state.message = ("reset \(count) keys under \(path).", false)
            case .revert(let key, let record):
                try source.revert(key, to: record.version)
                refresh([key])
                state.focus = .tree
                state.message = (
                    "reverted \(key) to \(catalog.entry(key)?.valueText ?? "its default")", false
                )
            }
        } catch {
            state.message = ("refused: \(error.message)", true)
        }
    }

    /// Writes every staged change in one transaction: all of them, or none and the reason.
    func writeStaged() {
        guard !state.staged.isEmpty else {
            state.message = ("nothing staged: t stages edits", false)
            return
        }
        do {
            try source.write(state.staged)
            let keys = state.staged.map(\.key)
            state.staged.removeAll()
            refresh(Set(keys))
            state.message = ("wrote \(keys.count) changes in one transaction", false)
        } catch {
            state.message = ("refused, nothing written: \(error.message)", true)
        }
    }

    private func stage(_ write: SettingWrite) {
        state.staged.removeAll { $0.key == write.key }
        state.staged.append(write)
    }

    /// Why `entry` cannot be changed here, or nil when it can.
    private func refusal(toChange entry: KeyEntry) -> String? {
        if source.isReadOnly { return readOnlyRefusal }
        guard entry.origin.isHeld else { return nil }
        let holder = state.detail?.key == entry.key ? state.detail?.description?.lockedBy : nil
        return
            "\(entry.key) is held by \(holder ?? (entry.origin == .locked ? "a lock" : "the hub's policy")): it cannot be changed here"
    }

    private var readOnlyRefusal: String {
        "the file is open read-only: browse through the daemon to change keys"
    }
}
