package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The sync keys kept in a file only the user can read (mode 0600, in a 0700 folder):
/// `$XDG_CONFIG_HOME/settingsd/sync-key`, or `~/.config/settingsd/sync-key`.
///
/// ```
/// {"settingsd":"sync-keys","version":1,"keys":[{"naming":"…","sealing":"…"},…]}
/// ```
///
/// The first key is the current one, the others those it was rotated from. A file another user
/// could read or write is refused, as `ssh` refuses such a private key.
package struct SyncKeyFile: Sendable {
    /// The file's path.
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// The file for this user: `$XDG_CONFIG_HOME/settingsd/sync-key`, else under `$HOME/.config`.
    package static var standard: SyncKeyFile {
        let config =
            getenv("XDG_CONFIG_HOME").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? ((getenv("HOME").map { String(cString: $0) } ?? "/") + "/.config")
        return SyncKeyFile(path: config + "/settingsd/sync-key")
    }

    /// The keys in the file; nil when there is no file.
    package func load() throws(SettingsError) -> SyncKeyring? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw FileSystem.error("cannot read the sync key file '\(path)'", path: path)
        }
        guard info.st_mode & 0o077 == 0, info.st_uid == getuid() else {
            throw SettingsError(
                .accessDenied,
                "the sync key file '\(path)' may be read or written by other users (mode \(String(info.st_mode & 0o777, radix: 8))): it is not used; make it yours with 'chmod 600'",
                path: path)
        }
        let bytes = try FileSystem.read(path, limit: 1 << 16)
        do throws(SettingsError) {
            return try Self.keyring(in: bytes)
        } catch {
            throw SettingsError(
                error.code, "the sync key file '\(path)' cannot be read: \(error.message)", path: path)
        }
    }

    /// Writes `keyring` to the file (creating its folder), replacing it whole.
    package func save(_ keyring: SyncKeyring) throws(SettingsError) {
        try FileSystem.createDirectories(FileSystem.parent(of: path))
        try FileSystem.writeAtomically(Self.encoded(keyring), to: path, mode: 0o600)
    }

    /// Removes the file; nothing when there is none.
    package func remove() throws(SettingsError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw FileSystem.error("cannot remove the sync key file '\(path)'", path: path)
        }
    }

    /// A keyring's bytes in the file's format (also what the Secret Service keeps).
    package static func encoded(_ keyring: SyncKeyring) -> [UInt8] {
        let keys: [JSONValue] = ([keyring.current] + keyring.previous).map { key in
            var fields: [String: JSONValue] = [
                "naming": .string(Hex.string(key.naming)), "sealing": .string(Hex.string(key.sealing)),
            ]
            fields["derivation"] = key.derivation?.json
            return .object(fields)
        }
        var bytes: [UInt8] = []
        JSONValue.object(["settingsd": "sync-keys", "version": .integer(1), "keys": .array(keys)]).write(
            to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The keyring in bytes of the file's format.
    package static func keyring(in bytes: [UInt8]) throws(SettingsError) -> SyncKeyring {
        let fields = try JSONFields(JSONValue.parse(bytes), what: "a sync key file")
        guard try fields.string("settingsd") == "sync-keys", try fields.integer("version") == 1 else {
            throw SettingsError(.protocolError, "it is not a settingsd sync key file of version 1")
        }
        var keys: [SyncKey] = []
        for json in try fields.optionalArray("keys") ?? [] {
            let key = try JSONFields(json, what: "a sync key")
            guard let naming = Hex.bytes(try key.string("naming")), naming.count == SyncKey.secretBytes,
                let sealing = Hex.bytes(try key.string("sealing")), sealing.count == SyncKey.secretBytes
            else { throw SettingsError(.protocolError, "a key's secrets are malformed") }
            var derivation: SyncKey.Derivation?
            if let object = key.members["derivation"], object != .null {
                derivation = try SyncKey.Derivation(json: object, what: "a key's derivation")
            }
            keys.append(SyncKey(naming: naming, sealing: sealing, derivation: derivation))
        }
        guard let current = keys.first else { throw SettingsError(.protocolError, "it holds no key") }
        return SyncKeyring(current: current, previous: Array(keys.dropFirst()))
    }
}
