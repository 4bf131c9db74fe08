import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// The options of `settingsd run`, each declared once with its type and the values it accepts.
enum RunOptions {
    static let database = Option<String>(
        "--db", "PATH",
        "the database (default: $SETTINGSD_DB, else $XDG_DATA_HOME/settingsd/settings.sqlite)",
        completion: .file)
    static let socket = Option<String>(
        "--socket", "PATH",
        "the socket (default: $SETTINGSD_SOCKET, else $XDG_RUNTIME_DIR/settingsd/settingsd.sock)",
        completion: .file)
    static let name = Option<String>(
        "--name", "NAME",
        "the name this replica goes by in status, history and the hub (default: the machine's host name)")
    static let durability = Option<Durability>.choice(
        "--durability", "MODE", "normal: survives a crash of the daemon (default); full: survives power loss")
    static let logLevel = Option<SettingsLogger.Level>(
        "--log-level", "LEVEL", "debug, info (default), warning or error; logs go to stderr",
        expecting: "debug, info, warning or error",
        completion: .choices(SettingsLogger.Level.allCases.map(\.name)),
        convert: SettingsLogger.Level.init(name:))
    static let allowUID = Option<UInt32>(
        "--allow-uid", "UID",
        "also serve this user id (repeatable); by default only the daemon's user and root",
        expecting: "a numeric user id", repeatable: true, convert: UInt32.init)
    /// The frame every value of the desktop limits needs, and the default.
    static let minimumFrame = ServerConfiguration.minimumFrameBytes(for: .desktop)
    static let maxFrame = Option<Int>.integer(
        "--max-frame", "BYTES",
        "the largest request accepted (default 8388608; at least \(minimumFrame), what the largest value needs)",
        in: minimumFrame...(1 << 30), expecting: "a byte count from \(minimumFrame) to \(1 << 30)")
    static let tombstoneDays = Option<Double>.number(
        "--tombstone-days", "DAYS",
        "keep deleted keys' tombstones this long, so every replica hears of a delete (default 90)",
        in: 1...36_500,
        expecting: "a number of days from 1 to 36500")
    static let idleTimeout = Option<Double>.number(
        "--idle-timeout", "SECONDS",
        "close a client idle this long; watchers and replicas stay (default 300, 0: never)",
        in: 0...31_536_000, expecting: "a number of seconds up to a year (0: never)")
    static let peer = Option<String>(
        "--peer", "SOCKET|URL",
        "sync with the daemon at this socket, or over SSH: ssh://[user@]host[:port][/remote-socket] (repeatable; reconnects with backoff)",
        repeatable: true, completion: .file)
    static let remoteSettingsd = Option<String>(
        "--remote-settingsd", "COMMAND",
        "what SSH peers run on the remote machine to reach settingsd (default: settingsd from its PATH)")
    static let folder = Option<String>(
        "--folder", "DIR",
        "sync through this folder, kept in sync between machines by Syncthing, Nextcloud, Dropbox… (repeatable)",
        repeatable: true, completion: .directory)
    static let plainFolder = Option<String>(
        "--plain-folder", "DIR",
        "sync through this folder in the clear, even with a sync key (repeatable)",
        repeatable: true, completion: .directory)
    static let hub = Option<String>(
        "--hub", "URL",
        "sync through this PostgreSQL hub: a libpq connection string or postgresql:// URI (default: $SETTINGSD_HUB)"
    )
    static let hubNamespace = Option<String>(
        "--hub-namespace", "NAME",
        "the hub namespace: a role the hub role is a member of (default: the hub role itself)")
    static let hubStallTimeout = Option<Double>.number(
        "--hub-stall-timeout", "SECONDS",
        "reconnect to the hub when a statement goes unanswered this long (default 30)", in: 1...3_600,
        expecting: "a number of seconds from 1 to 3600")
    static let dconf = Option<String>(
        "--dconf", "DIR",
        "mirror this dconf dir both ways, live (repeatable; /org/gnome/; needs the session's D-Bus)",
        repeatable: true)
    static let flatpak = Flag(
        "--flatpak",
        "mirror every Flatpak app's settings keyfile both ways, live (~/.var/app/APP_ID/config/glib-2.0/settings/keyfile; keys under flatpak.APP_ID.)"
    )
    static let flatpakApp = Option<String>(
        "--flatpak-app", "APP_ID", "with --flatpak: only this app (repeatable)", repeatable: true)
    static let flatpakExclude = Option<String>(
        "--flatpak-exclude", "APP_ID", "with --flatpak: not this app (repeatable)", repeatable: true)
    static let schemas = Option<String>(
        "--schemas", "DIR",
        "read schema files (*.json) here (repeatable; default: $XDG_DATA_DIRS/settingsd/schemas)",
        repeatable: true, completion: .directory)
    static let systemDirectory = Option<String>(
        "--system-dir", "DIR",
        "read system defaults (defaults.d) and locks (locks.d) here (default: /etc/settingsd)",
        completion: .directory)
    static let strictSchemas = Flag("--strict-schemas", "refuse keys that no schema declares")
    static let historyKeep = Option<UInt64>(
        "--history-keep", "DURATION", "keep history records this long: 90d (default), 12h, 0 (no history)",
        expecting: "a duration such as 90d, 12h, 30m or 0 (off)", convert: RunCommand.milliseconds)
    static let historyMax = Option<Int>.integer(
        "--history-max", "N", "keep at most this many history records (default 1000000)",
        in: 0...Int(Int32.max),
        expecting: "a number of records")

    static let all: [any OptionDeclaration] = [
        name,
        database, socket, durability, logLevel, allowUID, maxFrame, tombstoneDays, idleTimeout, peer,
        remoteSettingsd,
        folder, plainFolder, hub, hubNamespace, hubStallTimeout, dconf, flatpak, flatpakApp, flatpakExclude,
        schemas,
        systemDirectory,
        strictSchemas,
        historyKeep,
        historyMax,
    ]
}
