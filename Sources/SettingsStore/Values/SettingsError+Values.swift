extension SettingsError {
    /// A stored value of another kind than the type asked for.
    static func typeMismatch(key: String?, stored: SettingValue, expected: Any.Type) -> SettingsError {
        let subject = key.map { " for '\($0)'" } ?? ""
        return SettingsError(
            .typeMismatch,
            "type mismatch\(subject): stored \(stored.kind), expected \(expected)",
            key: key
        )
    }
}
