import SettingsStore

/// A command's help: what `settingsd help COMMAND` prints.
struct CommandSpec {
    let name: String
    let overview: String
    let usage: String
    let arguments: [(String, String)]
    let options: [(String, String)]

    static let connectionOptions = [
        (
            "--socket PATH",
            "the daemon's socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)"
        ),
        (
            "--db PATH",
            "work on this database file directly instead of a daemon (refused while a daemon holds it)"
        ),
        ("-h, --help", "show this help"),
    ]

    static let all: [CommandSpec] = [
        CommandSpec(
            name: "run", overview: "Run the daemon: serve a settings database on a Unix socket.",
            usage:
                "settingsd run [--db PATH] [--socket PATH] [--peer SOCKET]... [--durability normal|full] [--log-level LEVEL]",
            arguments: [],
            options: [
                (
                    "--db PATH",
                    "the database (default: $SETTINGSD_DB, else $XDG_DATA_HOME/settingsd/settings.sqlite)"
                ),
                (
                    "--socket PATH",
                    "the socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)"
                ),
                (
                    "--durability MODE",
                    "normal: survives a crash of the daemon (default); full: survives power loss"
                ),
                ("--log-level LEVEL", "debug, info (default), warning or error; logs go to stderr"),
                (
                    "--allow-uid UID",
                    "also serve this user id (repeatable); by default only the daemon's user and root"
                ),
                ("--max-frame BYTES", "the largest request accepted (default 1048576)"),
                (
                    "--peer SOCKET",
                    "sync with the daemon at this socket (repeatable; reconnects with backoff)"
                ),
                ("-h, --help", "show this help"),
            ]),
        CommandSpec(
            name: "get",
            overview: "Print a key's value: strings as they are, other values as JSON. Exit 1 if unset.",
            usage: "settingsd get KEY [--json]", arguments: [("KEY", "the key")],
            options: [("--json", "print the value as JSON even when it is a string")] + connectionOptions),
        CommandSpec(
            name: "set", overview: "Store a value.",
            usage: "settingsd set KEY VALUE [--type TYPE] | settingsd set KEY --json VALUE",
            arguments: [
                ("KEY", "the key"), ("VALUE", "the value; a string unless --type or --json says otherwise"),
            ],
            options: [
                (
                    "--type TYPE",
                    "bool, int, double, string, json, data (base64) or date (ISO 8601 or seconds since 1970)"
                ),
                (
                    "--json",
                    "VALUE is JSON: objects, arrays and numbers keep their types (same as --type json)"
                ),
            ] + connectionOptions),
        CommandSpec(
            name: "delete", overview: "Remove a key, so readers get its default again.",
            usage: "settingsd delete KEY",
            arguments: [("KEY", "the key")], options: connectionOptions),
        CommandSpec(
            name: "list", overview: "List keys and values under a prefix, sorted.",
            usage: "settingsd list [PREFIX] [--json]",
            arguments: [("PREFIX", "only keys starting with this (default: all)")],
            options: [("--json", "print one JSON object of key: value")] + connectionOptions),
        CommandSpec(
            name: "watch", overview: "Print one line per change until interrupted.",
            usage: "settingsd watch [KEY | PREFIX. | PREFIX*]... [--json]",
            arguments: [
                ("KEY", "an exact key; an argument ending in '.' or '*' is a prefix; none watches everything")
            ],
            options: [("--json", "print each change event as one JSON line")] + connectionOptions),
        CommandSpec(
            name: "export", overview: "Write every value as one JSON document.",
            usage: "settingsd export [FILE]",
            arguments: [("FILE", "where to write (mode 0600); default or '-': stdout")],
            options: connectionOptions),
        CommandSpec(
            name: "import",
            overview: "Restore an exported document in one transaction; checked before anything is written.",
            usage: "settingsd import FILE [--replace]",
            arguments: [("FILE", "the document; '-' reads stdin")],
            options: [("--replace", "also delete keys that are not in the document")] + connectionOptions),
        CommandSpec(
            name: "sync", overview: "Wait until every connected peer has acknowledged every local change.",
            usage: "settingsd sync --wait [--timeout SECONDS]", arguments: [],
            options: [
                ("--wait", "block until connected peers are caught up (a progress line on a terminal)"),
                ("--timeout SECONDS", "give up after this long, with exit status 1 (default 60)"),
            ] + connectionOptions),
        CommandSpec(
            name: "status",
            overview: "Show the daemon's replica id, key count, size, clients, digest and peers.",
            usage: "settingsd status [--json]", arguments: [],
            options: [("--json", "print one JSON object")] + connectionOptions),
        CommandSpec(
            name: "help", overview: "Show help for settingsd or one of its commands.",
            usage: "settingsd help [COMMAND]",
            arguments: [("COMMAND", "a command name")], options: []),
    ]

    static func named(_ name: String) -> CommandSpec? {
        all.first { $0.name == name }
    }

    var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        if !arguments.isEmpty { text += "\nARGUMENTS:\n" + Self.table(arguments) }
        if !options.isEmpty { text += "\nOPTIONS:\n" + Self.table(options) }
        return text
    }

    static var generalHelp: String {
        """
        OVERVIEW: settingsd \(SettingsdVersion.current): typed settings for Linux, durable in SQLite, \
        with change notifications.

        USAGE: settingsd <command> [arguments] [options]

        SUBCOMMANDS:
        \(table(all.map { ($0.name, $0.overview) }))
        OPTIONS:
        \(table([("-h, --help", "show help"), ("--version", "show the version")]))
        See 'settingsd help <command>' for a command's arguments and options.
        """
    }

    private static func table(_ rows: [(String, String)]) -> String {
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + $0.1 + "\n" }
            .joined()
    }
}
