package import SettingsDaemonClient
package import SettingsStore

/// What the browser shows besides the keys themselves: the screen, the selection and scroll
/// position, the open folders, the search, the prompt, staged changes, recent changes to
/// highlight, and the selected key's details. The views draw it; `Browser` changes it.
package struct BrowserState {
    /// The screen in front.
    package enum Screen: Equatable, Sendable {
        case keys, sync, help
    }

    /// Which pane the arrows move in.
    package enum Focus: Equatable, Sendable {
        case tree, history
    }

    /// What a `y` answer to a question does.
    package enum Confirmed: Equatable, Sendable {
        case delete(String)
        case resetFolder(String)
        case revert(String, HistoryRecord)
        case quit
    }

    /// The line at the bottom, when it asks for something.
    package enum Prompt: Equatable, Sendable {
        /// Search text, applied as it is typed.
        case search(LineEditor)
        /// A path to go to.
        case jump(LineEditor)
        /// A new value for a key.
        case edit(key: String, LineEditor)
        /// A question answered with y or n.
        case confirm(String, Confirmed)
    }

    /// The selected key's details.
    package struct Detail: Sendable {
        /// The key.
        package var key: String
        /// What `describe` says, or nil when it failed.
        package var description: KeyDescription?
        /// Its history, newest first.
        package var history: [HistoryRecord] = []
        /// Why they could not be read, if they could not.
        package var error: String?
    }

    /// The screen in front.
    package var screen = Screen.keys
    /// The pane the arrows move in.
    package var focus = Focus.tree
    /// The open folders, by path.
    package var expanded: Set<String> = []
    /// The rows drawn, in order.
    package var rows: [KeyTree.Row] = []
    /// The selected row's path.
    package var selection: String?
    /// The first row on screen.
    package var top = 0
    /// The search applied to the tree, if one is.
    package var search: String?
    /// The search's results as a tree, while one is applied.
    package var searchTree: KeyTree?
    /// The prompt, when one is open.
    package var prompt: Prompt?
    /// A line of news or a refusal, until the next key.
    package var message: (text: String, isError: Bool)?
    /// Whether edits are staged (written together with `w`) rather than written at once.
    package var isStaging = false
    /// The staged changes, by key, in the order staged.
    package var staged: [SettingWrite] = []
    /// Keys changed by others a moment ago, until when they are highlighted.
    package var highlighted: [String: ContinuousClock.Instant] = [:]
    /// The selected key's details.
    package var detail: Detail?
    /// The selected history record.
    package var historySelection = 0
    /// The replica's state, for the sync view.
    package var status: DaemonStatus?
    /// Why the state or live changes cannot be read now, if they cannot.
    package var connectionProblem: String?

    /// An empty state.
    package init() {}

    /// The index of the selected row, if it is drawn.
    package var selectedIndex: Int? {
        guard let selection else { return nil }
        return rows.firstIndex { $0.path == selection }
    }

    /// The staged change of `key`, if there is one.
    package func stagedChange(of key: String) -> SettingWrite? {
        staged.last { $0.key == key }
    }
}
