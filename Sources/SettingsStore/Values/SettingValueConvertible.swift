/// A Swift type that can be stored as a setting.
///
/// The library conforms `Bool`, the integer and floating-point types, `String`, `Data`, `Date`,
/// `URL`, `UUID`, arrays, dictionaries with `String` keys, `Optional` and `SettingValue` itself.
/// Your own types conform with an empty extension when they are `RawRepresentable` with a
/// `String` or `Int` raw value, or `Codable` (stored as a structured value, not a string):
///
/// ```swift
/// enum Theme: String, SettingValueConvertible { case light, dark }
/// struct Window: Codable, SettingValueConvertible { var width = 800, height = 600 }
/// ```
public protocol SettingValueConvertible: Sendable {
    /// Creates an instance from its stored form, throwing `SettingsError` with code
    /// `typeMismatch` when the stored value does not fit this type.
    init(settingValue: SettingValue) throws(SettingsError)

    /// The stored form of this instance, or `nil` to remove the key (only `Optional.none` does).
    func settingValue() throws(SettingsError) -> SettingValue?
}

extension SettingValue: SettingValueConvertible {
    /// Returns the value itself.
    public init(settingValue: SettingValue) { self = settingValue }
    /// Returns the value itself.
    public func settingValue() -> SettingValue? { self }
}

extension Optional: SettingValueConvertible where Wrapped: SettingValueConvertible {
    /// Creates `.some` from a stored value; a missing key reads as `.none` through the key's default.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = .some(try Wrapped(settingValue: settingValue))
    }

    /// The wrapped value's stored form, or `nil` (remove the key) for `.none`.
    public func settingValue() throws(SettingsError) -> SettingValue? {
        switch self {
        case .none: nil
        case .some(let wrapped): try wrapped.settingValue()
        }
    }
}

extension SettingValueConvertible {
    /// The stored form, throwing when the type produced none (a nested `Optional.none`).
    func requiredSettingValue() throws(SettingsError) -> SettingValue {
        guard let value = try settingValue() else {
            throw SettingsError(.invalidValue, "nil cannot be stored inside a collection")
        }
        return value
    }
}
