import SettingsStore

/// A command, declared once: its help, its options (which drive parsing) and what runs it.
struct CommandSpec: Sendable {
    let name: String
    let overview: String
    let usage: String
    var arguments: [(String, String)] = []
    var options: [OptionSpec] = []
    /// Whether the command runs in `settingsd-daemon`: the daemon itself, and commands that reach
    /// a PostgreSQL hub through libpq (see `CommandLineBinary`).
    var runsInDaemonBinary = false
    /// Runs the command with its parsed arguments and returns the exit status.
    let run: @Sendable (ParsedArguments) throws -> Int32

    /// `settingsd help COMMAND`: OVERVIEW, USAGE, ARGUMENTS, OPTIONS.
    var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        if !arguments.isEmpty { text += "\nARGUMENTS:\n" + Self.table(arguments) }
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
        See 'settingsd help <command>' for a command's arguments and options.
        """
    }

    /// The command called `name`.
    static func named(_ name: String) -> CommandSpec? {
        Commands.all.first { $0.name == name }
    }

    private static func table(_ rows: [(String, String)]) -> String {
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + $0.1 + "\n" }
            .joined()
    }
}
