import CSecret
package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The sync keys kept in the session's Secret Service (GNOME Keyring, KWallet's), through
/// libsecret, as one secret of schema `org.settingsd.SyncKeys` with attributes
/// `application=settingsd` and `user=<uid>` in the default collection, in the key file's format
/// (`SyncKeyFile.encoded`). libsecret is opened on first use.
package struct SecretServiceKeys: SyncKeyStore {
    package init() {}

    package var location: String { "the Secret Service (default collection, as 'settingsd sync keys')" }

    /// Whether the session has a Secret Service that answers a lookup (no D-Bus session bus, no
    /// libsecret, or no service on the bus: it has none).
    package var isReachable: Bool {
        guard getenv("DBUS_SESSION_BUS_ADDRESS") != nil else { return false }
        do throws(SettingsError) {
            _ = try lookup()
            return true
        } catch {
            return false
        }
    }

    package func load() throws(SettingsError) -> SyncKeyring? {
        guard let text = try lookup() else { return nil }
        do throws(SettingsError) {
            return try SyncKeyFile.keyring(in: Array(text.utf8))
        } catch {
            throw SettingsError(error.code, "the sync keys in \(location) cannot be read: \(error.message)")
        }
    }

    package func save(_ keyring: SyncKeyring) throws(SettingsError) {
        var api = try Self.functions()
        let text = String(decoding: SyncKeyFile.encoded(keyring), as: UTF8.self)
        if let failure = csettings_secret_store(&api, Self.user, "settingsd sync keys", text) {
            defer { free(failure) }
            throw Self.failed("cannot keep the sync keys in", failure)
        }
    }

    package func remove() throws(SettingsError) {
        var api = try Self.functions()
        if let failure = csettings_secret_clear(&api, Self.user) {
            defer { free(failure) }
            throw Self.failed("cannot remove the sync keys from", failure)
        }
    }

    /// The secret's text; nil when none is kept.
    private func lookup() throws(SettingsError) -> String? {
        var api = try Self.functions()
        var failure: UnsafeMutablePointer<CChar>?
        let found = csettings_secret_lookup(&api, Self.user, &failure)
        defer {
            free(found)
            free(failure)
        }
        if let failure { throw Self.failed("cannot read the sync keys from", failure) }
        return found.map { String(cString: $0) }
    }

    private static var user: String { String(getuid()) }

    private static func failed(_ what: String, _ reason: UnsafeMutablePointer<CChar>) -> SettingsError {
        SettingsError(.io, "\(what) the Secret Service: \(String(cString: reason))")
    }

    /// The loaded functions, or why libsecret cannot be used.
    private static let loaded: Result<CSettingsSecret, SettingsError> = {
        let api = UnsafeMutablePointer<CSettingsSecret>.allocate(capacity: 1)
        defer { api.deallocate() }
        if let reason = csettings_secret_load(api) {
            return .failure(
                SettingsError(
                    .io,
                    "keeping sync keys in the Secret Service needs libsecret (libsecret-1.so.0, Debian package libsecret-1-0): \(String(cString: reason))"
                ))
        }
        return .success(api.move())
    }()

    private static func functions() throws(SettingsError) -> CSettingsSecret {
        try loaded.get()
    }
}

extension CSettingsSecret: @retroactive @unchecked Sendable {}  // immutable; its libraries stay loaded
