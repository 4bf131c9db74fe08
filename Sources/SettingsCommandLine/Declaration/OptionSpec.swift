import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

/// One option of a command, as every generated text sees it: parsing, usage, help, completions
/// and the man page all read it. Commands read its value through a typed `Option` or `Flag`.
struct OptionSpec: Sendable {
    /// The long name with its dashes, `--type`.
    let name: String
    /// The placeholder of its value in help (`TYPE`), or nil for a flag that takes none.
    let value: String?
    /// The help text.
    let help: String
    /// Whether it may be given more than once (each value is kept).
    var isRepeatable = false
    /// Options that cannot be given together with this one.
    var conflicts: [String] = []
    /// What a shell completes for its value.
    var completion: Completion = .none

    /// Whether it takes a value.
    var takesValue: Bool { value != nil }

    /// The left column of its help row.
    var label: String { value.map { "\(name) \($0)" } ?? name }

    /// Its form in a usage line: `[--type TYPE]`, `[--peer SOCKET]...`, `[--json]`.
    var usage: String { "[\(label)]" + (isRepeatable ? "..." : "") }
}

/// What a shell offers for an argument or an option's value.
enum Completion: Sendable, Equatable {
    /// Nothing in particular.
    case none
    /// File names.
    case file
    /// Folder names.
    case directory
    /// One of these words.
    case choices([String])
    /// Key names, asked of the daemon (or `--db`) with `settingsd list --keys`.
    case keys
    /// The commands of `settingsd`.
    case commands
}

/// A positional argument of a command: help, usage and completions read it.
struct ArgumentSpec: Sendable {
    /// Its placeholder, `KEY`.
    let name: String
    /// The help text.
    let help: String
    /// Whether it may be left out.
    var isOptional = false
    /// Whether it may be given several times.
    var isRepeatable = false
    /// What a shell completes for it.
    var completion: Completion = .none

    /// Its form in a usage line: `KEY`, `[PREFIX]`, `[KEY]...`.
    var usage: String {
        let core = isOptional ? "[\(name)]" : name
        return core + (isRepeatable ? "..." : "")
    }
}
