import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// A command, declared once: its overview, arguments and options drive parsing, and its usage
/// line, help, shell completions and man page section are generated from them.
struct CommandSpec: Sendable {
    let name: String
    let overview: String
    let arguments: [ArgumentSpec]
    let options: [OptionSpec]
    /// Whether the command runs in `settingsd-daemon`: the daemon itself, and commands that reach
    /// a PostgreSQL hub through libpq (see `CommandLineBinary`).
    let runsInDaemonBinary: Bool
    /// Runs the command with its parsed arguments and returns the exit status.
    let run: @Sendable (ParsedArguments) throws -> Int32

    init(
        name: String, overview: String, arguments: [ArgumentSpec] = [], options: [any OptionDeclaration] = [],
        runsInDaemonBinary: Bool = false, run: @escaping @Sendable (ParsedArguments) throws -> Int32
    ) {
        self.name = name
        self.overview = overview
        self.arguments = arguments
        self.options = options.map(\.spec)
        self.runsInDaemonBinary = runsInDaemonBinary
        self.run = run
    }

    /// The usage line: the command, its arguments, then every option.
    var usage: String {
        (["settingsd", name] + arguments.map(\.usage) + options.map(\.usage)).joined(separator: " ")
    }

    /// `settingsd help COMMAND`: OVERVIEW, USAGE, ARGUMENTS, OPTIONS.
    var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(Self.wrap(usage, indent: 7, width: 100))\n"
        if !arguments.isEmpty { text += "\nARGUMENTS:\n" + Self.table(arguments.map { ($0.name, $0.help) }) }
        let rows = options.map { ($0.label, $0.help) } + [("-h, --help", "show this help")]
        text += "\nOPTIONS:\n" + Self.table(rows)
        return text
    }

    /// `settingsd help`: every command with its overview.
    static var generalHelp: String {
        """
        OVERVIEW: settingsd \(SettingsdVersion.current): typed settings for Linux, durable in SQLite, \
        with change notifications.

        USAGE: settingsd <command> [arguments] [options]

        SUBCOMMANDS:
        \(table(Commands.all.map { ($0.name, $0.overview) }))
        OPTIONS:
        \(table([("-h, --help", "show help"), ("--version", "show the version")]))
        See 'settingsd help <command>' for a command's arguments and options, \
        'settingsd help --man' for the manual page.
        """
    }

    /// The command called `name`.
    static func named(_ name: String) -> CommandSpec? {
        Commands.all.first { $0.name == name }
    }

    /// Rows of two columns, the second aligned.
    static func table(_ rows: [(String, String)]) -> String {
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + $0.1 + "\n" }
            .joined()
    }

    /// `text` broken at spaces into lines of at most `width` columns, later lines indented by
    /// `indent` spaces (a word longer than a line stays whole).
    static func wrap(_ text: String, indent: Int, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let limit = width - indent
            if !line.isEmpty, line.count + 1 + word.count > limit {
                lines.append(line)
                line = String(word)
            } else {
                line += (line.isEmpty ? "" : " ") + word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
