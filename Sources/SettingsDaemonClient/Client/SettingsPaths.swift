import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The default places of the daemon's database and socket, shared by the daemon and the CLI.
public enum SettingsPaths {
    /// `$SETTINGSD_DB`, else `$XDG_DATA_HOME/settingsd/settings.sqlite`, else
    /// `~/.local/share/settingsd/settings.sqlite`.
    public static var database: String {
        database(environment: environment)
    }

    /// `$SETTINGSD_DB` when it is set and not empty.
    package static var databaseFromEnvironment: String? {
        environment("SETTINGSD_DB")
    }

    /// `$SETTINGSD_HUB` when it is set and not empty: the PostgreSQL hub `settingsd run` syncs
    /// through and `settingsd hub` administers.
    package static var hubFromEnvironment: String? {
        environment("SETTINGSD_HUB")
    }

    /// `$SETTINGSD_SOCKET`, else `$XDG_RUNTIME_DIR/settingsd/settingsd.sock`, else
    /// `/tmp/settingsd-<uid>/settingsd.sock`, unless another user made that folder first (anyone
    /// may create folders in `/tmp`): then `$XDG_STATE_HOME/settingsd/settingsd.sock` (else
    /// `~/.local/state/…`), which the daemon and its clients both fall back to.
    public static var socket: String {
        socket(environment: environment, uid: getuid())
    }

    /// The socket path clients use when none is named (`$SETTINGSD_SOCKET` unset): a daemon
    /// answering there must run as the user or as root.
    package static var defaultSocket: String {
        socket(environment: { $0 == "SETTINGSD_SOCKET" ? nil : environment($0) }, uid: getuid())
    }

    /// `/tmp/settingsd-<uid>` when it is another user's (or writable by others): someone may be
    /// posing as settingsd there. Nil when it is absent or safe.
    package static func squattedSharedFolder(uid: UInt32 = getuid()) -> (path: String, owner: UInt32)? {
        let folder = "/tmp/settingsd-\(uid)"
        var info = stat()
        guard lstat(folder, &info) == 0 else { return nil }
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        let isOwn = info.st_uid == uid || info.st_uid == 0
        guard !isFolder || !isOwn || info.st_mode & 0o022 != 0 else { return nil }
        return (folder, info.st_uid)
    }

    /// The database path for an environment (`variable` returns a variable's value, nil when
    /// unset); empty variables count as unset.
    static func database(environment variable: (String) -> String?) -> String {
        func value(_ name: String) -> String? { variable(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let path = value("SETTINGSD_DB") { return path }
        if let data = value("XDG_DATA_HOME") { return data + "/settingsd/settings.sqlite" }
        let home = value("HOME") ?? passwordHome() ?? "/tmp"
        return home + "/.local/share/settingsd/settings.sqlite"
    }

    /// The socket path for an environment and user id; empty variables count as unset.
    /// `isSquatted` says whether `/tmp/settingsd-<uid>` is another user's.
    static func socket(
        environment variable: (String) -> String?, uid: uid_t,
        isSquatted: (uid_t) -> Bool = { squattedSharedFolder(uid: $0) != nil }
    ) -> String {
        func value(_ name: String) -> String? { variable(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let path = value("SETTINGSD_SOCKET") { return path }
        if let runtime = value("XDG_RUNTIME_DIR") { return runtime + "/settingsd/settingsd.sock" }
        guard isSquatted(uid) else { return "/tmp/settingsd-\(uid)/settingsd.sock" }
        if let state = value("XDG_STATE_HOME") { return state + "/settingsd/settingsd.sock" }
        let home = value("HOME") ?? passwordHome() ?? "/"
        return home + "/.local/state/settingsd/settingsd.sock"
    }

    /// The home folder in the user database, for a process started without `$HOME`.
    private static func passwordHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
