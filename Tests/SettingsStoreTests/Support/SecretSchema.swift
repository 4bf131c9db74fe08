import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

extension SettingsSchema {
    /// A schema that marks the string key `key` secret: its history keeps fingerprints only.
    static func secret(_ key: String) throws -> SettingsSchema {
        var rule = SchemaRule(key: key, type: .string, file: "test.json")
        rule.isSecret = true
        return try SettingsSchema(rules: [rule])
    }
}
