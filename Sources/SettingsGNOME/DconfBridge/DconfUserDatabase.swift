import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The file dconf keeps the user's own values in (`$XDG_CONFIG_HOME/dconf/user`, or the database
/// a `user-db:` line of `$DCONF_PROFILE` names): its modification time bounds when any change
/// found in it can have been made.
enum DconfUserDatabase {
    /// The database's path, as dconf finds it.
    static var path: String {
        let config =
            environment("XDG_CONFIG_HOME") ?? ((environment("HOME") ?? "/") + "/.config")
        return "\(config)/dconf/\(profileDatabaseName() ?? "user")"
    }

    /// When the database was last written, in milliseconds since 1970, never after `now`; nil
    /// when it cannot be read (no user values yet).
    static func lastModified(notAfter now: UInt64) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let milliseconds =
            UInt64(max(0, info.st_mtim.tv_sec)) * 1000 + UInt64(max(0, info.st_mtim.tv_nsec)) / 1_000_000
        return min(milliseconds, now)
    }

    /// The name of the first `user-db:` line of the profile `$DCONF_PROFILE` names (a path, or a
    /// name under `/etc/dconf/profile`), if it has one.
    private static func profileDatabaseName() -> String? {
        guard let profile = environment("DCONF_PROFILE") else { return nil }
        let file = profile.hasPrefix("/") ? profile : "/etc/dconf/profile/\(profile)"
        guard let handle = fopen(file, "r") else { return nil }
        defer { fclose(handle) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, handle) > 0, let line {
            let text = String(cString: line).trimmingSpaces
            guard text.hasPrefix("user-db:") else { continue }
            let name = String(text.dropFirst("user-db:".count))
            return name.isEmpty || name.contains("/") ? nil : name
        }
        return nil
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line ends.
    fileprivate var trimmingSpaces: String {
        let isSpace = { (character: Character) in character == " " || character == "\t" || character.isNewline
        }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
