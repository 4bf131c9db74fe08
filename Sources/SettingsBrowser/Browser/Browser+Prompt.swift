/// The bottom line's prompts: search as you type, go to a path, edit a value, answer a question.
extension Browser {
    func handlePrompt(_ key: KeyPress) {
        guard let prompt = state.prompt else { return }
        switch prompt {
        case .search(var editor):
            switch key {
            case .escape:
                state.prompt = nil
                applySearch("")
            case .enter, .down, .up:
                state.prompt = nil
            default:
                guard editor.apply(key) else { return }
                state.prompt = .search(editor)
                applySearch(editor.string)
            }
        case .jump(var editor):
            switch key {
            case .escape: state.prompt = nil
            case .enter:
                state.prompt = nil
                jump(to: editor.string)
            case .tab:
                editor = LineEditor(completion(of: editor.string))
                state.prompt = .jump(editor)
            default:
                if editor.apply(key) { state.prompt = .jump(editor) }
            }
        case .edit(let path, var editor):
            switch key {
            case .escape:
                state.prompt = nil
                state.message = nil
            case .enter: finishEdit(path, text: editor.string)
            default:
                if editor.apply(key) { state.prompt = .edit(key: path, editor) }
            }
        case .confirm(_, let action):
            switch key {
            case .character("y"), .character("Y"):
                state.prompt = nil
                carryOut(action)
            case .character("n"), .character("N"), .escape, .enter:
                state.prompt = nil
            default: break
            }
        }
    }

    /// Goes to the key or folder `path`, or the first key that starts with it.
    private func jump(to path: String) {
        let trimmed = path.hasSuffix(".") ? String(path.dropLast()) : path
        if catalog.tree.node(trimmed) != nil {
            reveal(trimmed)
        } else if let key = catalog.tree.keys.first(where: { $0.hasPrefix(path) }) {
            reveal(key)
        } else {
            state.message = ("no key or folder '\(path)'", true)
        }
    }

    /// `text` completed as far as the paths that start with it agree (Tab in the jump prompt).
    private func completion(of text: String) -> String {
        let matches = catalog.tree.keys.filter { $0.hasPrefix(text) }
        guard var common = matches.first else { return text }
        for key in matches.dropFirst() {
            while !key.hasPrefix(common) { common.removeLast() }
        }
        return common
    }
}
