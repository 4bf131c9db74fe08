extension Settings {
    /// The value for `key`: stored, or the key's default when unset or of another type.
    ///
    /// A value of another type is reported to `configuration.onError`; use
    /// `value(for:)` to get the error instead.
    public subscript<Value>(key: SettingKey<Value>) -> Value {
        do {
            return try value(for: key)
        } catch {
            configuration.onError?(error)
            return key.defaultValue
        }
    }

    /// The value for `key`, or its default when unset (a lock or a system default comes first).
    ///
    /// - Throws: `SettingsError` with code `typeMismatch` when the stored value has another type.
    public func value<Value>(for key: SettingKey<Value>) throws(SettingsError) -> Value {
        try key.value(from: cache.withLock { $0.overridingValue(forKey: key.name) })
    }

    /// The value stored for `key` converted to `type`, or nil when unset (defaults included).
    ///
    /// - Throws: `SettingsError` with code `typeMismatch` when the value has another type.
    public func value<Value: SettingValueConvertible>(forKey key: String, as type: Value.Type)
        throws(SettingsError)
        -> Value?
    {
        guard let stored = value(forKey: key) else { return nil }
        do {
            return try Value(settingValue: stored)
        } catch {
            throw error.with(key: key)
        }
    }

    /// Stores `value` for `key`; for an optional key, `nil` removes it.
    public func set<Value>(_ value: Value, for key: SettingKey<Value>) throws(SettingsError) {
        try set(value, forKey: key.name)
    }

    /// Removes the stored value, so reads return the key's default again.
    public func removeValue<Value>(for key: SettingKey<Value>) throws(SettingsError) {
        try removeValue(forKey: key.name)
    }

    /// Whether `key` holds a stored value rather than its default.
    public func containsValue<Value>(for key: SettingKey<Value>) -> Bool {
        containsValue(forKey: key.name)
    }

    /// Reads, changes and writes `key` as one atomic operation, and returns the new value.
    ///
    /// ```swift
    /// try settings.update(.launchCount) { $0 += 1 }
    /// ```
    ///
    /// No other write to the store commits between the read and the write, so concurrent
    /// updates never lose an increment.
    @discardableResult
    public func update<Value>(_ key: SettingKey<Value>, _ body: (inout Value) throws -> Void) throws -> Value
    {
        try transaction { transaction in
            var value = key.defaultValue
            if let stored = transaction.value(forKey: key.name) {
                do throws(SettingsError) {
                    value = try Value(settingValue: stored)
                } catch {
                    throw error.with(key: key.name)
                }
            }
            try body(&value)
            try transaction.set(value, forKey: key.name)
            return value
        }
    }
}

extension SettingsTransaction {
    /// The value `key` will have after this transaction, or its default.
    public subscript<Value>(key: SettingKey<Value>) -> Value {
        guard let stored = value(forKey: key.name) else { return key.defaultValue }
        do {
            return try Value(settingValue: stored)
        } catch {
            settings.configuration.onError?(error.with(key: key.name))
            return key.defaultValue
        }
    }

    /// Stores `value` for `key` when the transaction commits.
    public func set<Value>(_ value: Value, for key: SettingKey<Value>) throws(SettingsError) {
        try set(value, forKey: key.name)
    }

    /// Removes `key` when the transaction commits.
    public func removeValue<Value>(for key: SettingKey<Value>) throws(SettingsError) {
        try removeValue(forKey: key.name)
    }
}
