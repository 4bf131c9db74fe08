/// The version of this library and daemon.
public enum SettingsdVersion {
    /// The release version, printed by `settingsd --version` and sent in `hello`.
    public static let current = "0.1.0"
    /// The wire protocol version this build speaks to clients.
    public static let protocolVersion: Int64 = 1
    /// The replica sync protocol version this build speaks (`docs/SYNC.md`).
    public static let replicaProtocolVersion: Int64 = 2
}
