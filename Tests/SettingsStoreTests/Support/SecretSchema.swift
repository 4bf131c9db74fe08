import SettingsStore

extension SettingsSchema {
    /// A schema that marks the string key `key` secret: its history keeps fingerprints only.
    static func secret(_ key: String) throws -> SettingsSchema {
        var rule = SchemaRule(key: key, type: .string, file: "test.json")
        rule.isSecret = true
        return try SettingsSchema(rules: [rule])
    }
}
