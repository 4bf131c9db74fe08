import SettingsStore

/// One side a bridge mirrors the store with, by path (`/org/gnome/TextEditor/style-scheme`):
/// dconf (`DconfClient`), or a Flatpak app's keyfile (`AppKeyfile`). `BridgeEngine` compares
/// through it, so both bridges decide alike.
protocol BridgeSide: AnyObject {
    /// The user's keys under `dir` (paths).
    func userKeys(under dir: String) -> [String]
    /// The user's value at `path`, read as `type` where the side stores text (nil: untyped).
    func userValue(at path: String, type: GVariantType?) throws(SettingsError) -> GVariant?
    /// Whether the bridge may write `path`.
    func isWritable(_ path: String) -> Bool
    /// Writes `changes` (a nil value removes the key) as one change; returns the tag its change
    /// notification will carry, if the side tags them.
    func change(_ changes: [(path: String, value: GVariant?)]) throws(SettingsError) -> String?
    /// The latest time, not after `now` (milliseconds since 1970), the side can have been
    /// changed while no bridge watched it, if it knows.
    func lastModified(notAfter now: UInt64) -> UInt64?
}

/// How a bridge names a side's paths in the store: dconf's keys as they are
/// (`org.gnome.TextEditor.style-scheme`), a Flatpak app's under a prefix of its own
/// (`flatpak.org.gnome.TextEditor.org.gnome.TextEditor.style-scheme`).
struct BridgeKeys: Sendable {
    /// What every store key of the side starts with (empty for dconf).
    let prefix: String

    /// The store key of `path`, if it has one.
    func key(forPath path: String) -> String? {
        (try? DconfPath.key(forPath: path)).map { prefix + $0 }
    }

    /// The path of the store key `key`, when it is one of the side's and maps back to it.
    func path(forKey key: String) -> String? {
        guard key.hasPrefix(prefix) else { return nil }
        let rest = String(key.dropFirst(prefix.count))
        guard let path = try? DconfPath.path(forKey: rest), (try? DconfPath.key(forPath: path)) == rest else {
            return nil
        }
        return path
    }

    /// The store prefixes of the keys under `dir` (both spellings of a dir with a dot in a name).
    func prefixes(forDir dir: String) -> [String] {
        Array(Set([(try? DconfPath.keyPrefix(forDir: dir)) ?? dir, dir])).map { prefix + $0 }
    }
}
