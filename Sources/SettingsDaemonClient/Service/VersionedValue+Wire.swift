package import SettingsStore
import SettingsWire

extension VersionedValue {
    /// The stored value and version a `get` with `stored` answers; nil when the key holds none.
    package init?(getAnswer fields: [String: JSONValue], key: String) throws(SettingsError) {
        guard case .bool(true)? = fields["found"], let json = fields["value"] else { return nil }
        guard case .string(let text)? = fields["version"], let version = SettingVersion(text) else {
            throw SettingsError(.protocolError, "the daemon answered '\(key)' without its version", key: key)
        }
        self.init(value: try SettingValue(json: json), version: version)
    }
}
