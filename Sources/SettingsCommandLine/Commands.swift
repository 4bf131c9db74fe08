import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

/// Every command of `settingsd`, each declared once: parsing, help, usage, completions and the
/// man page are generated from these declarations.
enum Commands {
    private static let key = ArgumentSpec(name: "KEY", help: "the key", completion: .keys)

    static let all: [CommandSpec] = [
        CommandSpec(
            name: "run", overview: "Run the daemon: serve a settings database on a Unix socket.",
            options: RunOptions.all, runsInDaemonBinary: true, run: { try RunCommand($0).run() }),
        CommandSpec(
            name: "get",
            overview:
                "Print a key's value: strings as they are, dates in ISO 8601, the rest as JSON. Exit 1 if unset.",
            arguments: [key],
            options: [Options.jsonValue, Options.explain, Options.withVersion] + Options.connection,
            run: ClientCommands.get),
        CommandSpec(
            name: "set", overview: "Store a value.",
            arguments: [
                key,
                ArgumentSpec(
                    name: "VALUE",
                    help:
                        "the value: typed by the key's schema, else as the value the key holds (a bool, number, date or data stays one), else a string; --type or --json say otherwise"
                ),
            ],
            options: [Options.type, Options.jsonInput, Options.ifVersion, Options.ifAbsent]
                + Options.connection,
            run: ClientCommands.set),
        CommandSpec(
            name: "delete", overview: "Remove a key, so readers get its default again.", arguments: [key],
            options: [Options.ifVersion, Options.ifAbsent] + Options.connection, run: ClientCommands.delete),
        CommandSpec(
            name: "reset",
            overview:
                "Return a key, every key under a prefix, or the whole store (--all) to its defaults (synced).",
            arguments: [
                ArgumentSpec(
                    name: "KEY", help: "a key, or a prefix ending in '.'", isOptional: true, completion: .keys
                )
            ],
            options: [Options.all] + Options.connection, run: ClientCommands.reset),
        CommandSpec(
            name: "describe",
            overview:
                "Show a key's schema (type, default, range, choices, summary, scope), lock and value's source.",
            arguments: [key], options: [Options.json] + Options.connection, run: DescribeCommand.run),
        CommandSpec(
            name: "list", overview: "List keys and values under a prefix, sorted; strings are quoted.",
            arguments: [
                ArgumentSpec(
                    name: "PREFIX", help: "only keys starting with this (default: all)", isOptional: true,
                    completion: .keys)
            ],
            options: [Options.schema, Options.builtIn, Options.keysOnly, Options.jsonObject, Options.pretty]
                + Options.connection,
            run: ClientCommands.list),
        CommandSpec(
            name: "watch", overview: "Print one line per change until interrupted.",
            arguments: [
                ArgumentSpec(
                    name: "KEY",
                    help:
                        "an exact key; an argument ending in '.' or '*' is a prefix; none watches everything",
                    isOptional: true, isRepeatable: true, completion: .keys)
            ],
            options: [Options.jsonEvents, Options.sinceSequence, Options.socket], run: WatchCommand.run),
        CommandSpec(
            name: "export", overview: "Write every value as one JSON document, or as dconf dump writes them.",
            arguments: [
                ArgumentSpec(
                    name: "DIR", help: "with --format dconf: the dconf dir to write (default /)",
                    isOptional: true, completion: .file),
                ArgumentSpec(
                    name: "FILE", help: "where to write (mode 0600); default or '-': stdout",
                    isOptional: true,
                    completion: .file),
            ],
            options: [Options.at, Options.format] + Options.connection, run: ClientCommands.export),
        CommandSpec(
            name: "history", overview: "Show who changed keys, when, from where, newest first.",
            arguments: [
                ArgumentSpec(
                    name: "KEY", help: "a key, or a prefix ending in '.'; none: every key", isOptional: true,
                    completion: .keys)
            ],
            options: [Options.since, Options.until, Options.limit, Options.jsonLines] + Options.connection,
            run: HistoryCommands.history),
        CommandSpec(
            name: "revert",
            overview:
                "Write earlier values back, as new writes (synced, recorded as revert): --to VERSION for a key, --before TIME for a key or prefix.",
            arguments: [
                ArgumentSpec(
                    name: "KEY", help: "a key, or a prefix ending in '.' (with --before)", completion: .keys)
            ],
            options: [Options.toVersion, Options.before] + Options.connection, run: HistoryCommands.revert),
        CommandSpec(
            name: "import",
            overview:
                "Restore an exported document (or a dconf dump) in one transaction; checked before anything is written.",
            arguments: [
                ArgumentSpec(
                    name: "DIR",
                    help: "with --format dconf: the dconf dir the file was dumped from (default /)",
                    isOptional: true, completion: .file),
                ArgumentSpec(name: "FILE", help: "the document; '-' reads stdin", completion: .file),
            ],
            options: [Options.replace, Options.format] + Options.connection,
            run: ClientCommands.importDocument),
        CommandSpec(
            name: "schema",
            overview:
                "Check a schema file (settingsd's JSON, or GSettings' .gschema.xml or a folder of them), print typed Swift keys for it, or turn a dconf database into system defaults and locks.",
            arguments: [
                ArgumentSpec(
                    name: "ACTION", help: "check, swift or import-dconf-db",
                    completion: .choices(["check", "swift", "import-dconf-db"])),
                ArgumentSpec(
                    name: "FILE",
                    help:
                        "a schema file or folder (see docs/SCHEMA.md); for import-dconf-db a dconf keyfile folder such as /etc/dconf/db/local.d",
                    isOptional: true, completion: .file),
                ArgumentSpec(
                    name: "SYSTEM-DIR",
                    help:
                        "import-dconf-db: where defaults.d and locks.d are written (default /etc/settingsd)",
                    isOptional: true, completion: .file),
            ],
            options: [Options.store] + Options.connection,
            run: SchemaCommands.run),
        CommandSpec(
            name: "dconf",
            overview:
                "Audit the dconf dirs the daemon mirrors (run --dconf): each key's scope and how often it changed in the last day, busiest first, to choose what stays on this machine.",
            arguments: [
                ArgumentSpec(name: "ACTION", help: "audit", completion: .choices(["audit"])),
                ArgumentSpec(
                    name: "DIR", help: "the dconf dir to audit (default: the dirs the daemon mirrors)",
                    isOptional: true),
            ],
            options: [Options.json] + Options.connection,
            run: DconfCommands.audit),
        CommandSpec(
            name: "hub",
            overview:
                "Prepare a PostgreSQL hub (init: create or upgrade its schema), show what a role sees of it, write fleet policies and read what each machine applied.",
            arguments: [
                ArgumentSpec(
                    name: "ACTION",
                    help:
                        "init, status, policy (set URL NAME FILE, show URL NAME, list URL, history URL NAME, remove URL NAME, group URL GROUP [MACHINE...]) or report (URL [POLICY])",
                    completion: .choices(["init", "status", "policy", "report"])),
                ArgumentSpec(
                    name: "URL",
                    help: "a libpq connection string or postgresql:// URI (default: $SETTINGSD_HUB)",
                    isOptional: true),
                ArgumentSpec(
                    name: "ARGUMENTS", help: "what the policy action or report takes (see ACTION)",
                    isOptional: true),
            ],
            options: [
                Options.json, Options.pollRate, HubPolicyCommands.target, HubPolicyCommands.dryRun,
                HubPolicyCommands.unseenAfter,
            ], runsInDaemonBinary: true, run: HubCommands.run),
        CommandSpec(
            name: "flatpak",
            overview:
                "List the Flatpak apps whose settings 'run --flatpak' mirrors, or copy an app's host dconf values into its Flatpak keyfile.",
            arguments: [
                ArgumentSpec(
                    name: "ACTION",
                    help: "list, or migrate (copy the host's dconf values into the app's keyfile)",
                    completion: .choices(["list", "migrate"])),
                ArgumentSpec(
                    name: "APP_ID", help: "with migrate: the app (org.gnome.TextEditor)", isOptional: true),
            ],
            options: [FlatpakCommands.dryRun], runsInDaemonBinary: true, run: FlatpakCommands.run),
        CommandSpec(
            name: "keys",
            overview:
                "Make, show, export, import or rotate the sync key that seals (end-to-end encrypts) what this machine sends to a hub or a synced folder.",
            arguments: [
                ArgumentSpec(
                    name: "ACTION",
                    help:
                        "init (make a key), show (its id and where it is kept), export (print its recovery text), import (read one from standard input), rotate (a new key; the old one still opens what it sealed)",
                    completion: .choices(["init", "show", "export", "import", "rotate"]))
            ],
            options: [KeysCommands.passphrase, KeysCommands.salt, KeysCommands.saltFrom, KeysCommands.force],
            runsInDaemonBinary: true, run: KeysCommands.run),
        CommandSpec(
            name: "bridge",
            overview:
                "Join standard input and output to the daemon's socket: what an SSH peer runs on this machine.",
            options: [Options.socket],
            run: { arguments in
                StdioBridge.run(socketPath: arguments.value(Options.socket) ?? SettingsPaths.socket)
            }),
        CommandSpec(
            name: "sync",
            overview: "Wait until every connected peer and hub has every local change, and the peers agree.",
            options: [Options.wait, Options.timeout, Options.socket], run: StatusCommands.sync),
        CommandSpec(
            name: "browse",
            overview:
                "Browse and edit the keys in the terminal, live: values, schemas, layers, history with revert, sync state.",
            options: [Options.noMouse] + Options.connection, run: BrowseCommand.run),
        CommandSpec(
            name: "status",
            overview: "Show the daemon's replica id, key count, size, clients, digest and peers.",
            options: [Options.json] + Options.connection, run: StatusCommands.status),
        CommandSpec(
            name: "completions",
            overview: "Print a completion script for bash, zsh or fish (commands, options, keys, files).",
            arguments: [
                ArgumentSpec(
                    name: "SHELL", help: "bash, zsh or fish", completion: .choices(ShellCompletions.shells))
            ],
            run: ShellCompletions.run),
        CommandSpec(
            name: "help", overview: "Show help for settingsd or one of its commands.",
            arguments: [
                ArgumentSpec(name: "COMMAND", help: "a command name", isOptional: true, completion: .commands)
            ],
            options: [Options.man], run: CLI.help),
    ]
}
