import Foundation
import SettingsDaemonClient
public import SettingsStore
import SettingsSync

/// SwiftUI's `@AppStorage` for models on Linux: a `@Setting` on the key of a `UserDefaults`
/// suite, so `@AppStorage("username") var username = "Anonymous"` in an `ObservableObject`-style
/// `SettingsOwner` or an `@Observable` class (`@ObservationIgnored @AppStorage(…)`) compiles with
/// an import change, and the owner hears of every change of the key, whoever made it.
///
/// Without `store:` the key is in `SettingsDefaults.standard`'s suite; with a `SettingsDefaults`
/// it is in that suite; values are shared with `UserDefaults` calls on the same suite.
@propertyWrapper
public struct AppStorage<Value: SettingValueConvertible>: Sendable {
    @usableFromInline var setting: Setting<Value>

    /// The value stored at `key` in `store`'s suite (default: the standard suite), else `wrappedValue`.
    public init(wrappedValue: Value, _ key: String, store: SettingsDefaults? = nil) {
        let defaults = store ?? (SettingsDefaults.standard as? SettingsDefaults)
        setting = Setting(
            SettingKey(
                (defaults?.prefix ?? SettingsDefaults.prefix(forSuite: nil)) + key, default: wrappedValue),
            store: defaults?.settings ?? SharedStores.defaults)
    }

    /// Unavailable: `@AppStorage` works only on properties of classes, as `@Setting` does.
    @available(*, unavailable, message: "@AppStorage is only available on properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swift-format-ignore
        set { fatalError("unavailable") }
    }

    /// A binding to the stored value: `$username`.
    public var projectedValue: SettingBinding<Value> { setting.projectedValue }

    /// The property's value, read or written by its owning class (see `Setting`).
    @inlinable
    public static subscript<Owner: AnyObject>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, AppStorage<Value>>
    ) -> Value {
        get {
            Setting<Value>[
                _enclosingInstance: owner, wrapped: wrappedKeyPath,
                storage: storageKeyPath.appending(path: \AppStorage<Value>.setting)]
        }
        set {
            Setting<Value>[
                _enclosingInstance: owner, wrapped: wrappedKeyPath,
                storage: storageKeyPath.appending(path: \AppStorage<Value>.setting)] = newValue
        }
    }
}
