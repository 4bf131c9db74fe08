package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Where this user's sync keys are kept: the Secret Service (GNOME Keyring, KWallet) when the
/// session has one, else a file only the user can read. `status` and `keys show` say where,
/// never what.
package protocol SyncKeyStore: Sendable {
    /// Where, in words: `the Secret Service (default collection)` or `the file PATH`.
    var location: String { get }
    /// The keys kept; nil when none are.
    func load() throws(SettingsError) -> SyncKeyring?
    /// Keeps `keyring`, replacing what was kept.
    func save(_ keyring: SyncKeyring) throws(SettingsError)
    /// Forgets the keys; nothing when none are kept.
    func remove() throws(SettingsError)
}

extension SyncKeyFile: SyncKeyStore {
    package var location: String { "the file \(path)" }
}

/// Choosing the store.
package enum SyncKeyStores {
    /// This user's store: `$SETTINGSD_SYNC_KEY_STORE` (`file` or `secret-service`) when set;
    /// else the file when it holds keys (so keys made before a keyring was there stay found);
    /// else the Secret Service when the session has one that answers; else the file.
    ///
    /// - Throws: `io` when `$SETTINGSD_SYNC_KEY_STORE` names the Secret Service and it cannot be
    ///   reached; `invalidValue` for another value.
    package static func standard() throws(SettingsError) -> any SyncKeyStore {
        let file = SyncKeyFile.standard
        switch getenv("SETTINGSD_SYNC_KEY_STORE").map({ String(cString: $0) }) ?? "" {
        case "file": return file
        case "secret-service":
            let service = SecretServiceKeys()
            _ = try service.load()
            return service
        case "":
            var status = stat()
            if stat(file.path, &status) == 0 { return file }
            let service = SecretServiceKeys()
            return service.isReachable ? service : file
        case let other:
            throw SettingsError(
                .invalidValue, "$SETTINGSD_SYNC_KEY_STORE is '\(other)': it is file or secret-service")
        }
    }
}
