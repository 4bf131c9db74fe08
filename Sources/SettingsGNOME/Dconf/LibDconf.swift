package import CDconf
package import SettingsStore

/// libdconf and GLib, opened the first time a dconf bridge starts: the CLI and daemons without
/// `--dconf` never load them.
package enum LibDconf {
    /// The loaded functions, or why libdconf cannot be used.
    private static let loaded: Result<CSettingsDconf, SettingsError> = {
        let api = UnsafeMutablePointer<CSettingsDconf>.allocate(capacity: 1)
        defer { api.deallocate() }
        if let reason = csettings_dconf_load(api) {
            return .failure(
                SettingsError(
                    .io,
                    "the dconf bridge needs libdconf (libdconf.so.1, Debian package libdconf1): \(String(cString: reason))"
                ))
        }
        return .success(api.move())
    }()

    /// libdconf's and GLib's functions.
    ///
    /// - Throws: `SettingsError` when libdconf is not installed.
    package static func functions() throws(SettingsError) -> CSettingsDconf {
        try loaded.get()
    }
}

extension CSettingsDconf: @retroactive @unchecked Sendable {}  // immutable; its libraries stay loaded
