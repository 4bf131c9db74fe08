/// The version of this library and daemon.
public enum SettingsdVersion {
    /// The release version, printed by `settingsd --version` and sent in `hello`.
    public static let current = "0.1.0"
    /// The wire protocol version this build speaks.
    public static let protocolVersion: Int64 = 1
}
