package import SettingsStore

/// Between dconf's paths and settingsd's keys: `/org/gnome/desktop/interface/gtk-theme` is
/// `org.gnome.desktop.interface.gtk-theme`. A path with a dot inside a name keeps its slashes
/// as the key (`/com/example/App.v2/size`), so every dconf key has one settingsd key and back.
package enum DconfPath {
    /// The settingsd key for the dconf key `path`.
    ///
    /// - Throws: `invalidKey` unless `path` is a dconf key: `/` first, never `//`, not `/` last.
    package static func key(forPath path: String) throws(SettingsError) -> String {
        try validateKey(path)
        // A dot anywhere is inside a name: the key keeps the path's slashes.
        if path.utf8.contains(UInt8(ascii: ".")) { return path }
        return String(
            decoding: path.utf8.dropFirst().map { $0 == UInt8(ascii: "/") ? UInt8(ascii: ".") : $0 },
            as: UTF8.self)
    }

    /// The dconf key path for a settingsd key.
    ///
    /// - Throws: `invalidKey` for a key with no dconf path (an empty name, as in `a..b`).
    package static func path(forKey key: String) throws(SettingsError) -> String {
        let path = key.hasPrefix("/") ? key : "/" + key.replacing(".", with: "/")
        try validateKey(path)
        return path
    }

    /// The settingsd key prefix for the dconf dir `dir` (`/org/gnome/` → `org.gnome.`).
    package static func keyPrefix(forDir dir: String) throws(SettingsError) -> String {
        try validateDir(dir)
        if dir == "/" { return "" }
        if dir.utf8.contains(UInt8(ascii: ".")) { return dir }
        return String(dir.dropFirst()).replacing("/", with: ".")
    }

    private static func hasDoubleSlash(_ path: String) -> Bool {
        var previous: UInt8 = 0
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/"), previous == byte { return true }
            previous = byte
        }
        return false
    }

    static func validateKey(_ path: String) throws(SettingsError) {
        guard path.utf8.first == UInt8(ascii: "/"), path.utf8.last != UInt8(ascii: "/"), !hasDoubleSlash(path)
        else {
            throw .invalidKey(path, "a dconf key starts with '/', does not end with '/' and holds no '//'")
        }
    }

    /// Throws unless `dir` is a dconf dir: `/` first and last, never `//`.
    package static func validateDir(_ dir: String) throws(SettingsError) {
        guard dir.utf8.first == UInt8(ascii: "/"), dir.utf8.last == UInt8(ascii: "/"), !hasDoubleSlash(dir)
        else {
            throw .invalidKey(dir, "a dconf dir starts and ends with '/' and holds no '//'")
        }
    }
}
