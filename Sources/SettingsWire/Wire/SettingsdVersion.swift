import SettingsStore

/// The version of this library and daemon.
package enum SettingsdVersion {
    /// The release version, printed by `settingsd --version` and sent in `hello`.
    package static let current = "0.1.0"
    /// The wire protocol version this build speaks to clients (2: a `$date` counts seconds since
    /// 2001-01-01T00:00:00Z, the reference date dates are kept in, so every date travels exactly).
    package static let protocolVersion: Int64 = 2
    /// The replica sync protocol version this build speaks (`docs/SYNC.md`; 3: exact dates).
    package static let replicaProtocolVersion: Int64 = 3
}
