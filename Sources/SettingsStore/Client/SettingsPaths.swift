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
        if let path = databaseFromEnvironment { return path }
        if let data = environment("XDG_DATA_HOME") { return data + "/settingsd/settings.sqlite" }
        return home + "/.local/share/settingsd/settings.sqlite"
    }

    /// `$SETTINGSD_DB` when it is set and not empty.
    public static var databaseFromEnvironment: String? {
        environment("SETTINGSD_DB")
    }

    /// `$SETTINGSD_SOCKET`, else `$XDG_RUNTIME_DIR/settingsd/settingsd.sock`, else
    /// `/tmp/settingsd-<uid>/settingsd.sock`.
    public static var socket: String {
        if let path = environment("SETTINGSD_SOCKET") { return path }
        if let runtime = environment("XDG_RUNTIME_DIR") { return runtime + "/settingsd/settingsd.sock" }
        return "/tmp/settingsd-\(getuid())/settingsd.sock"
    }

    private static var home: String {
        if let home = environment("HOME") { return home }
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/tmp" }
        return String(cString: directory)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
