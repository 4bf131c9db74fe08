import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// Every option of `settingsd`, each declared once with its type and the values it accepts.
enum Options {
    // MARK: Where requests go

    static let socket = Option<String>(
        "--socket", "PATH",
        "the daemon's socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)",
        completion: .file)
    static let database = Option<String>(
        "--db", "PATH",
        "work on this database file directly instead of a daemon (default: $SETTINGSD_DB when no daemon holds it)",
        completion: .file)
    static let connection: [any OptionDeclaration] = [socket, database]

    // MARK: Output

    static let json = Flag("--json", "print one JSON document (compact)")
    static let jsonValue = Flag("--json", "print the value as JSON even when it is a string")
    static let jsonLines = Flag("--json", "one JSON object per line")
    static let noMouse = Flag(
        "--no-mouse", "leave the mouse to the terminal (selecting text) instead of clicks and the wheel")
    static let jsonEvents = Flag("--json", "print each change event as one JSON line")
    static let jsonObject = Flag("--json", "print one JSON object of key: value")
    static let pretty = Flag("--pretty", "indent the JSON (with --json)")

    // MARK: Values and keys

    static let explain = Flag(
        "--explain",
        "also print where the value comes from (user, system default, lock, schema); with --json, one object of value and source"
    )
    static let type = Option<ValueTypeName>.choice(
        "--type", "TYPE",
        "bool, int, double, string, json, data (base64), date (ISO 8601 or seconds since 1970) or gvariant (GLib's text format: uint32 7, ['a'])",
        conflicts: ["--json"])
    static let ifVersion = Option<SettingPrecondition>(
        "--if-version", "VERSION",
        "write only if the key's stored value has this version (as `get --with-version` prints it; 'absent': none), else fail with versionMismatch and write nothing",
        expecting: "a version (milliseconds.counter@replica) or 'absent'", conflicts: ["--if-absent"]
    ) { text in
        text == "absent" ? .absent : SettingVersion(text).map { .version($0) }
    }
    static let ifAbsent = Flag(
        "--if-absent", "write only if the key holds no stored value (same as --if-version absent)",
        conflicts: ["--if-version"])
    static let builtIn = Flag(
        "--built-in",
        "with --schema: also the rules settingsd has built in (the GNOME keys that stay on one machine)")
    static let withVersion = Flag(
        "--with-version",
        "print the version of the key's stored value ('absent' when none) on a line before the value, read in one request: what --if-version takes"
    )
    static let sinceSequence = Option<Int>.integer(
        "--since", "SEQUENCE",
        "first print the changes after this sequence number, from the history (a change's `sequence` in --json), then go on live",
        in: 0...Int.max, expecting: "a sequence number, 0 or more")
    static let jsonInput = Flag(
        "--json", "VALUE is JSON: objects, arrays and numbers keep their types (same as --type json)",
        conflicts: ["--type"])
    static let schema = Flag(
        "--schema", "list the keys the schemas declare, with their effective values and sources")
    static let keysOnly = Flag(
        "--keys", "print only the key names, one per line (what shell completion reads)")

    // MARK: History

    static let at = time(
        "--at", "the store as it was then, from the history (ISO 8601 or seconds since 1970)")
    static let since = time("--since", "only changes at or after this time (ISO 8601 or seconds since 1970)")
    static let until = time("--until", "only changes at or before this time")
    static let limit = Option<Int>.integer(
        "--limit", "N", "at most this many changes (default 100, at most 100000)", in: 1...100_000,
        expecting: "a number of changes from 1 to 100000")
    static let pollRate = Option<Int>.integer(
        "--poll-rate", "N",
        "hub init: the polls a second the machines of one namespace make together at most (default 1250; a namespace of N machines polls every N/rate s, 5 s at least)",
        in: 1...1_000_000, expecting: "a number of polls a second from 1 to 1000000")
    static let toVersion = Option<SettingVersion>(
        "--to", "VERSION", "the version to restore, as history prints it",
        expecting: "a version as history prints it (milliseconds.counter@replica)", conflicts: ["--before"],
        convert: SettingVersion.init)
    static let before = time("--before", "restore the values from before this time", conflicts: ["--to"])

    /// A time option: ISO 8601 or seconds since 1970, read as milliseconds since 1970.
    private static func time(_ name: String, _ help: String, conflicts: [String] = []) -> Option<UInt64> {
        Option<UInt64>(
            name, "TIME", help, expecting: "a time in ISO 8601 (2026-11-29T14:03:07Z) or seconds since 1970",
            conflicts: conflicts
        ) { text in
            guard let seconds = ISO8601.parse(text) ?? Double(text), seconds >= 0, seconds < 1e12 else {
                return nil
            }
            return UInt64(seconds * 1000)
        }
    }

    // MARK: Import, sync, help

    static let replace = Flag(
        "--replace", "also delete keys that are not in the document (with --format dconf: those under DIR)")
    static let all = Flag("--all", "every key of the store (no KEY): the whole store back to its defaults")
    static let store = Flag(
        "--store",
        "schema check: list the stored values that no longer fit the schemas (exit 1 if any), through the daemon or --db"
    )
    static let format = Option<DocumentFormat>.choice(
        "--format", "FORMAT",
        "json (settingsd's export document, the default) or dconf (dconf dump's keyfile)")
    static let wait = Flag(
        "--wait", "block until peers and hubs are caught up and peers agree (progress on a terminal)")
    static let timeout = Option<Double>.number(
        "--timeout", "SECONDS", "give up after this long, with exit status 1 (default 60)",
        in: 0...31_536_000,
        expecting: "a number of seconds up to a year")
    static let man = Flag("--man", "print the manual page (roff) for every command")
}
