package import CLibPQ
package import SettingsStore
import SettingsWire

/// libpq, opened the first time a hub is used: processes that never reach a hub (the CLI's
/// client commands, daemons without `--hub`) never load it or the libraries it pulls in. The
/// benchmark's raw libpq floor uses the same functions.
package enum LibPQ {
    /// The loaded functions, or why libpq cannot be used.
    private static let loaded: Result<CSettingsLibPQ, SettingsError> = {
        let api = UnsafeMutablePointer<CSettingsLibPQ>.allocate(capacity: 1)
        defer { api.deallocate() }
        if let reason = csettings_libpq_load(api) {
            return .failure(
                SettingsError(
                    .io,
                    "the PostgreSQL hub needs libpq (libpq.so.5, Debian package libpq5): \(String(cString: reason))"
                ))
        }
        return .success(api.move())
    }()

    /// libpq's functions.
    ///
    /// - Throws: `SettingsError` when libpq is not installed.
    package static func functions() throws(SettingsError) -> CSettingsLibPQ {
        try loaded.get()
    }
}

extension CSettingsLibPQ: @retroactive @unchecked Sendable {}  // immutable; its library stays loaded
