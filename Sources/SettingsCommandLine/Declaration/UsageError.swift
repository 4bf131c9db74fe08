import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

/// A mistake in how the command was called: printed with a hint, exit status 64.
struct UsageError: Error {
    let message: String
    /// The command whose help explains the right usage, if any.
    let command: String?

    init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }
}
