import Observation

/// A setting as a property of a class: reads come from the store's memory, writes commit to it,
/// and the owner hears about every change of this key, whoever made it.
///
/// ```swift
/// final class PlayerModel: SettingsOwner {
///     let objectWillChange = ObjectWillChangePublisher()
///     @Setting(.volume) var volume                       // typed key with its default
///     @Setting("ui.theme") var theme = "light"           // string key, default from the initial value
/// }
///
/// @Observable final class AudioModel {
///     @ObservationIgnored @Setting(.volume) var volume   // Observation tracks it through the wrapper
/// }
/// ```
///
/// The owner subscribes lazily, to this key only, the first time the property is read or
/// written. Without a `store:` argument the property uses `SettingsEnvironment`'s store as it
/// is when the owner is made.
/// Only classes can own settings: the wrapper in a struct does not compile (its `wrappedValue`
/// is unavailable), because a copied struct has no identity to notify.
@propertyWrapper
public struct Setting<Value: SettingValueConvertible>: Sendable {
    /// The key, with its default.
    public let key: SettingKey<Value>
    @usableFromInline let slot: SettingSlot

    /// A setting for a typed key, in `store` or the environment's store.
    public init(_ key: SettingKey<Value>, store: Settings? = nil) {
        self.key = key
        self.slot = SettingSlot(name: key.name, store: store)
    }

    /// A setting for a string key whose default is the property's initial value.
    public init(wrappedValue defaultValue: Value, _ name: String, store: Settings? = nil) {
        self.init(SettingKey(name, default: defaultValue), store: store)
    }

    /// Unavailable: `@Setting` works only on properties of classes.
    @available(
        *, unavailable,
        message: "@Setting is only available on properties of classes (SettingsOwner or @Observable)"
    )
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swift-format-ignore
        set { fatalError("unavailable") }
    }

    /// A binding to the setting that can be handed to another object: `$volume`.
    public var projectedValue: SettingBinding<Value> {
        SettingBinding(key, in: slot.settings)
    }

    /// The property's value, read or written by its owning class.
    ///
    /// The owner is notified through `objectWillChange` if it is a `SettingsOwner`, through
    /// Observation if it is `@Observable`, through both if it is both; any other class can
    /// read and write the property but hears of no change.
    @inlinable  // Specialised in the owner's module: a property read then costs no generic dispatch.
    public static subscript<Owner: AnyObject>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Setting<Value>>
    ) -> Value {
        get {
            let setting = owner[keyPath: storageKeyPath]
            return setting.slot.use(by: owner, through: wrappedKeyPath)[setting.key]
        }
        set {
            let setting = owner[keyPath: storageKeyPath]
            setting.write(newValue, to: setting.slot.use(by: owner, through: wrappedKeyPath))
        }
    }

    /// Writes through the store; a refused write (a limit, a closed store) goes to `onError`.
    @usableFromInline func write(_ value: Value, to settings: Settings) {
        do {
            try settings.set(value, for: key)
        } catch {
            settings.configuration.onError?(error)
        }
    }
}
