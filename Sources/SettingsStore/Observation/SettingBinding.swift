/// A reference to one setting in one store that can be passed around, like SwiftUI's `Binding`.
///
/// ```swift
/// let volume = model.$volume             // from a @Setting property
/// volume.wrappedValue = 0.3
/// try volume.update { $0 += 0.1 }
/// for await value in volume.values { print(value) }   // current value first, then changes
/// ```
public struct SettingBinding<Value: SettingValueConvertible>: Sendable {
    /// The key, with its default.
    public let key: SettingKey<Value>
    /// The store the value lives in.
    public let settings: Settings

    /// A binding to `key` in `settings`.
    public init(_ key: SettingKey<Value>, in settings: Settings) {
        self.key = key
        self.settings = settings
    }

    /// The current value; setting it writes to the store (a refused write goes to `onError`).
    public var wrappedValue: Value {
        get { settings[key] }
        nonmutating set {
            do {
                try settings.set(newValue, for: key)
            } catch {
                settings.configuration.onError?(error)
            }
        }
    }

    /// Writes `value`, throwing when the store refuses it.
    public func set(_ value: Value) throws(SettingsError) {
        try settings.set(value, for: key)
    }

    /// Removes the stored value, so the setting reads its default again.
    public func reset() throws(SettingsError) {
        try settings.removeValue(for: key)
    }

    /// Changes the value atomically and returns the new value.
    @discardableResult
    public func update(_ body: (inout Value) throws -> Void) throws -> Value {
        try settings.update(key, body)
    }

    /// Whether the setting can be written: no administrator's lock or mandatory hub policy holds
    /// it (as GSettings' `is_writable`). Grey out a control that cannot change it.
    public var isWritable: Bool {
        lockingFile == nil
    }

    /// What holds the setting (the `locks.d` file, or the hub's mandatory policy), or nil when it
    /// can be written.
    public var lockingFile: String? {
        settings.lockingFile(forKey: key.name)
    }

    /// Whether the setting holds no stored value and reads its default.
    public var isDefault: Bool {
        !settings.containsValue(for: key)
    }

    /// The current value, then the value after each change, until the consuming task ends.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let token = settings.observe(key) { [settings, key] _ in continuation.yield(settings[key]) }
        continuation.yield(settings[key])
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }
}
