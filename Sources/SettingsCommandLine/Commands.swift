/// Every command of `settingsd`, each declared once.
enum Commands {
    static let socket = OptionSpec.option(
        "--socket", "PATH",
        "the daemon's socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)")
    static let database = OptionSpec.option(
        "--db", "PATH",
        "work on this database file directly instead of a daemon (default: $SETTINGSD_DB when no daemon holds it)"
    )
    static let connection = [socket, database]
    static let json = OptionSpec.flag("--json", "print one JSON document (compact)")

    static let all: [CommandSpec] = [
        CommandSpec(
            name: "run", overview: "Run the daemon: serve a settings database on a Unix socket.",
            usage:
                "settingsd run [--db PATH] [--socket PATH] [--peer SOCKET]... [--hub URL] [--durability normal|full] [--log-level LEVEL]",
            options: [
                .option(
                    "--db", "PATH",
                    "the database (default: $SETTINGSD_DB, else $XDG_DATA_HOME/settingsd/settings.sqlite)"),
                .option(
                    "--socket", "PATH",
                    "the socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)"),
                .option(
                    "--durability", "MODE",
                    "normal: survives a crash of the daemon (default); full: survives power loss"),
                .option("--log-level", "LEVEL", "debug, info (default), warning or error; logs go to stderr"),
                .option(
                    "--allow-uid", "UID",
                    "also serve this user id (repeatable); by default only the daemon's user and root",
                    repeatable: true),
                .option(
                    "--max-frame", "BYTES",
                    "the largest request accepted (default and minimum: what the largest value needs, 8388608)"
                ),
                .option(
                    "--tombstone-days", "DAYS",
                    "keep deleted keys' tombstones this long, so every replica hears of a delete (default 90)"
                ),
                .option(
                    "--idle-timeout", "SECONDS",
                    "close a client idle this long; watchers and replicas stay (default 300, 0: never)"),
                .option(
                    "--peer", "SOCKET",
                    "sync with the daemon at this socket (repeatable; reconnects with backoff)",
                    repeatable: true),
                .option(
                    "--hub", "URL",
                    "sync through this PostgreSQL hub: a libpq connection string or postgresql:// URI (default: $SETTINGSD_HUB)"
                ),
                .option(
                    "--hub-namespace", "NAME",
                    "the hub namespace: a role the hub role is a member of (default: the hub role itself)"),
                .option(
                    "--schemas", "DIR",
                    "read schema files (*.json) here (repeatable; default: $XDG_DATA_DIRS/settingsd/schemas)",
                    repeatable: true),
                .option(
                    "--system-dir", "DIR",
                    "read system defaults (defaults.d) and locks (locks.d) here (default: /etc/settingsd)"),
                .flag("--strict-schemas", "refuse keys that no schema declares"),
                .option(
                    "--history-keep", "DURATION",
                    "keep history records this long: 90d (default), 12h, 0 (no history)"),
                .option("--history-max", "N", "keep at most this many history records (default 1000000)"),
            ], runsInDaemonBinary: true, run: { try RunCommand($0).run() }),
        CommandSpec(
            name: "get",
            overview:
                "Print a key's value: strings as they are, dates in ISO 8601, the rest as JSON. Exit 1 if unset.",
            usage: "settingsd get KEY [--json] [--explain]", arguments: [("KEY", "the key")],
            options: [
                .flag("--json", "print the value as JSON even when it is a string"),
                .flag(
                    "--explain", "also print where the value comes from (user, system default, lock, schema)"),
            ] + connection,
            run: ClientCommands.get),
        CommandSpec(
            name: "set", overview: "Store a value.",
            usage: "settingsd set KEY VALUE [--type TYPE] | settingsd set KEY --json VALUE",
            arguments: [
                (
                    "KEY", "the key"
                ),
                (
                    "VALUE",
                    "the value: typed by the key's schema, else a string, unless --type or --json says"
                ),
            ],
            options: [
                .option(
                    "--type", "TYPE",
                    "bool, int, double, string, json, data (base64) or date (ISO 8601 or seconds since 1970)",
                    conflicts: ["--json"]),
                .flag(
                    "--json",
                    "VALUE is JSON: objects, arrays and numbers keep their types (same as --type json)",
                    conflicts: ["--type"]),
            ] + connection, run: ClientCommands.set),
        CommandSpec(
            name: "delete", overview: "Remove a key, so readers get its default again.",
            usage: "settingsd delete KEY", arguments: [("KEY", "the key")], options: connection,
            run: ClientCommands.delete),
        CommandSpec(
            name: "reset", overview: "Return a key, or every key under a prefix, to its defaults (synced).",
            usage: "settingsd reset KEY | settingsd reset PREFIX.",
            arguments: [("KEY", "a key, or a prefix ending in '.'")], options: connection,
            run: ClientCommands.reset),
        CommandSpec(
            name: "describe",
            overview:
                "Show a key's schema (type, default, range, choices, summary, scope), lock and value's source.",
            usage: "settingsd describe KEY [--json]", arguments: [("KEY", "the key")],
            options: [json] + connection, run: ClientCommands.describe),
        CommandSpec(
            name: "list", overview: "List keys and values under a prefix, sorted; strings are quoted.",
            usage: "settingsd list [PREFIX] [--schema] [--json [--pretty]]",
            arguments: [("PREFIX", "only keys starting with this (default: all)")],
            options: [
                .flag(
                    "--schema", "list the keys the schemas declare, with their effective values and sources"),
                .flag("--json", "print one JSON object of key: value"),
                .flag("--pretty", "indent the JSON (with --json)"),
            ] + connection, run: ClientCommands.list),
        CommandSpec(
            name: "watch", overview: "Print one line per change until interrupted.",
            usage: "settingsd watch [KEY | PREFIX. | PREFIX*]... [--json]",
            arguments: [
                ("KEY", "an exact key; an argument ending in '.' or '*' is a prefix; none watches everything")
            ],
            options: [.flag("--json", "print each change event as one JSON line"), socket],
            run: ClientCommands.watch),
        CommandSpec(
            name: "export", overview: "Write every value as one JSON document.",
            usage: "settingsd export [FILE] [--at TIME]",
            arguments: [("FILE", "where to write (mode 0600); default or '-': stdout")],
            options: [
                .option(
                    "--at", "TIME",
                    "the store as it was then, from the history (ISO 8601 or seconds since 1970)")
            ] + connection, run: ClientCommands.export),
        CommandSpec(
            name: "history", overview: "Show who changed keys, when, from where, newest first.",
            usage: "settingsd history [KEY | PREFIX.] [--since TIME] [--until TIME] [--limit N] [--json]",
            arguments: [("KEY", "a key, or a prefix ending in '.'; none: every key")],
            options: [
                .option(
                    "--since", "TIME", "only changes at or after this time (ISO 8601 or seconds since 1970)"),
                .option("--until", "TIME", "only changes at or before this time"),
                .option("--limit", "N", "at most this many changes (default 100)"),
                .flag("--json", "one JSON object per line"),
            ] + connection, run: HistoryCommands.history),
        CommandSpec(
            name: "revert",
            overview: "Write earlier values back, as new writes (synced, recorded as revert).",
            usage: "settingsd revert KEY --to VERSION | settingsd revert PREFIX. --before TIME",
            arguments: [("KEY", "a key, or a prefix ending in '.' (with --before)")],
            options: [
                .option(
                    "--to", "VERSION", "the version to restore, as history prints it", conflicts: ["--before"]
                ),
                .option("--before", "TIME", "restore the values from before this time", conflicts: ["--to"]),
            ] + connection, run: HistoryCommands.revert),
        CommandSpec(
            name: "import",
            overview: "Restore an exported document in one transaction; checked before anything is written.",
            usage: "settingsd import FILE [--replace]",
            arguments: [("FILE", "the document; '-' reads stdin")],
            options: [.flag("--replace", "also delete keys that are not in the document")] + connection,
            run: ClientCommands.importDocument),
        CommandSpec(
            name: "schema",
            overview:
                "Check a schema file, or print typed Swift keys for it (an app declares its keys once).",
            usage: "settingsd schema check FILE | settingsd schema swift FILE",
            arguments: [("ACTION", "check or swift"), ("FILE", "a schema file (see docs/SCHEMA.md)")],
            run: SchemaCommands.run),
        CommandSpec(
            name: "hub",
            overview:
                "Prepare a PostgreSQL hub (init: create or upgrade its schema) or show what a role sees of it.",
            usage: "settingsd hub init [URL] | settingsd hub status [URL] [--json]",
            arguments: [
                ("ACTION", "init or status"),
                ("URL", "a libpq connection string or postgresql:// URI (default: $SETTINGSD_HUB)"),
            ],
            options: [json], runsInDaemonBinary: true, run: HubCommands.run),
        CommandSpec(
            name: "sync",
            overview: "Wait until every connected peer and hub has every local change, and the peers agree.",
            usage: "settingsd sync --wait [--timeout SECONDS]",
            options: [
                .flag(
                    "--wait",
                    "block until peers and hubs are caught up and peers agree (progress on a terminal)"),
                .option("--timeout", "SECONDS", "give up after this long, with exit status 1 (default 60)"),
                socket,
            ], run: ClientCommands.sync),
        CommandSpec(
            name: "status",
            overview: "Show the daemon's replica id, key count, size, clients, digest and peers.",
            usage: "settingsd status [--json]", options: [json] + connection, run: ClientCommands.status),
        CommandSpec(
            name: "help", overview: "Show help for settingsd or one of its commands.",
            usage: "settingsd help [COMMAND]", arguments: [("COMMAND", "a command name")],
            run: CLI.help),
    ]
}
