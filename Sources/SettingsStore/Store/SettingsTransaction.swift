/// The writes of one `Settings.transaction { }`: committed together, announced as one change.
///
/// Reads see the transaction's own writes. Use it only inside the closure it was passed to,
/// and do not call the store itself from there: the transaction holds the store's writer lock.
public final class SettingsTransaction {
    let settings: Settings
    private(set) var writes: [(key: String, value: SettingValue?)] = []
    private var positions: [String: Int] = [:]

    init(settings: Settings) {
        self.settings = settings
    }

    /// The value `key` will have after this transaction: written here, stored, or the default.
    public func value(forKey key: String) -> SettingValue? {
        if let position = positions[key] {
            return writes[position].value ?? settings.cache.withLock { $0.defaults[key] }
        }
        return settings.value(forKey: key)
    }

    /// Stores `value` for `key` when the transaction commits; `nil` removes the key.
    public func set<Value: SettingValueConvertible>(_ value: Value, forKey key: String) throws(SettingsError) {
        let stored: SettingValue?
        do {
            stored = try value.settingValue()
        } catch {
            throw error.with(key: key)
        }
        try KeyValidation.validate(key, maximumBytes: settings.configuration.limits.maximumKeyBytes)
        record(key, stored)
    }

    /// Removes `key` when the transaction commits.
    public func removeValue(forKey key: String) {
        record(key, nil)
    }

    private func record(_ key: String, _ value: SettingValue?) {
        if let position = positions[key] {
            writes[position].value = value
        } else {
            positions[key] = writes.count
            writes.append((key, value))
        }
    }
}
