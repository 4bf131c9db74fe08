/// Settings an app also writes: one write, or several in one transaction, each guarded by the
/// version its key must hold (compare-and-set), wherever they live.
///
/// ```swift
/// func countLaunch(in settings: some SettingsWriting) async throws {
///     try await settings.update(SettingKey("app.launches", default: 0)) { $0 += 1 }
/// }
/// ```
public protocol SettingsWriting: SettingsReading {
    /// Applies `writes` in one transaction, durable when this returns, if every precondition
    /// holds; a key written twice ends with its last write.
    ///
    /// - Throws: `versionMismatch` naming every key whose precondition failed, and nothing is
    ///   written; what a write may throw (`locked`, `schemaViolation`, `limitExceeded`, …).
    func write(_ writes: [SettingWrite]) async throws(SettingsError)

    /// Stores `value` for a typed key (its default's type); `nil` of an optional removes it.
    func set<Value>(_ value: Value, for key: SettingKey<Value>) async throws(SettingsError)

    /// Reads `key`, lets `body` change its value, and writes it back so that no other write of
    /// the key is lost: in one transaction in a store (`Settings`), by compare-and-set and retry
    /// through a daemon (`SettingsClient`). Returns the value written.
    @discardableResult
    func update<Value>(_ key: SettingKey<Value>, _ body: (inout Value) throws -> Void) async throws -> Value
}

extension SettingsWriting {
    /// Stores `value` for `key` if it holds what `precondition` says (nil: whatever it holds).
    public func set(_ value: SettingValue, forKey key: String, if precondition: SettingPrecondition?)
        async throws(SettingsError)
    {
        try await write([.set(value, forKey: key, if: precondition)])
    }

    /// Removes `key`'s value if it holds what `precondition` says (nil: whatever it holds).
    public func removeValue(forKey key: String, if precondition: SettingPrecondition?)
        async throws(SettingsError)
    {
        try await write([.removeValue(forKey: key, if: precondition)])
    }

    /// Reads `key`, lets `body` change its value, and writes it back only if nobody wrote the
    /// key in between (compare-and-set); otherwise reads again and retries, at most `attempts`
    /// times (then `versionMismatch`). Returns the value written.
    package func compareAndSet<Value>(
        _ key: SettingKey<Value>, attempts: Int, _ body: (inout Value) throws -> Void
    ) async throws -> Value {
        var attempt = 0
        while true {
            attempt += 1
            let current = try await versionedValue(forKey: key.name)
            // Without a stored value, a default (schema, system) is the value to start from.
            let read = if let current { current.value } else { try await self.value(forKey: key.name) }
            var value = try key.value(from: read)
            try body(&value)
            let stored: SettingValue?
            do {
                stored = try value.settingValue()
            } catch {
                throw error.with(key: key.name)
            }
            let write = SettingWrite(key: key.name, value: stored, if: current.precondition)
            let outcome = await written([write])
            switch outcome {
            case .success: return value
            case .failure(let error) where error.code == .versionMismatch && attempt < attempts: continue
            case .failure(let error): throw error
            }
        }
    }

    /// `write(_:)`'s outcome as a value.
    private func written(_ writes: [SettingWrite]) async -> Result<Void, SettingsError> {
        do throws(SettingsError) {
            try await write(writes)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}
