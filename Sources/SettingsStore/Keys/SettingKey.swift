/// The namespace for typed keys: declare each key once as a static member in an extension.
///
/// ```swift
/// extension SettingKeys {
///     static let volume = SettingKey<Double>("audio.volume", default: 0.5)
/// }
/// let volume = settings[.volume]
/// ```
///
/// Static members declared here are visible as `.name` wherever a `SettingKey` is expected.
/// The class holds only immutable state.
public class SettingKeys: @unchecked Sendable {  // immutable: one `let`
    /// The key's name, as stored and as used by the CLI.
    public let name: String

    package init(name: String) {
        self.name = name
    }
}

/// A typed setting key: its name, its value type and the default read when the key is unset.
///
/// The default is never written and never synced, so a fresh replica cannot overwrite real
/// values elsewhere with it. The class holds only immutable, `Sendable` state.
public final class SettingKey<Value: SettingValueConvertible>: SettingKeys,
    @unchecked Sendable  // immutable: name and default are `let`s of Sendable types
{
    /// The value read when the key is unset or holds a value of another type.
    public let defaultValue: Value

    /// Creates a key named `name` whose value defaults to `defaultValue`.
    public init(_ name: String, default defaultValue: Value) {
        self.defaultValue = defaultValue
        super.init(name: name)
    }
}

extension SettingKey {
    /// Creates an optional key whose default is `nil`.
    public convenience init<Wrapped>(_ name: String) where Value == Wrapped? {
        self.init(name, default: nil)
    }
}

extension SettingKey {
    /// `stored` as the key's type, or the default when there is none.
    ///
    /// - Throws: `typeMismatch` naming the key when `stored` has another type.
    package func value(from stored: SettingValue?) throws(SettingsError) -> Value {
        guard let stored else { return defaultValue }
        do throws(SettingsError) {
            return try Value(settingValue: stored)
        } catch {
            throw error.with(key: name)
        }
    }
}

extension SettingKey: CustomStringConvertible {
    /// The key's name.
    public var description: String { name }
}
