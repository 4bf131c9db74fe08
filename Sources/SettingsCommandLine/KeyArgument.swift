import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

extension ParsedArguments {
    /// `text` as a key (or prefix) argument: refused as bad usage (exit 64) when it can name no
    /// key in any store (empty, a control character), before anything is contacted.
    func key(_ text: String) throws(UsageError) -> String {
        if let problem = KeyValidation.formProblem(text) { throw UsageError(problem, command: command) }
        return text
    }
}
