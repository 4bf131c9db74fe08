/// Integers store as `.integer`; reading checks the range, so a stored 300 never reads as an `Int8`.
public protocol SettingInteger: SettingValueConvertible, FixedWidthInteger {}

extension SettingInteger {
    /// Reads an `.integer` that fits this type.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .integer(let value) = settingValue, let exact = Self(exactly: value) else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: Self.self)
        }
        self = exact
    }

    /// Stores as `.integer`; an unsigned value above `Int64.max` is refused.
    public func settingValue() throws(SettingsError) -> SettingValue? {
        guard let value = Int64(exactly: self) else {
            throw SettingsError(.invalidValue, "\(self) does not fit a 64-bit signed integer")
        }
        return .integer(value)
    }
}

extension Int: SettingInteger {}
extension Int8: SettingInteger {}
extension Int16: SettingInteger {}
extension Int32: SettingInteger {}
extension Int64: SettingInteger {}
extension UInt: SettingInteger {}
extension UInt8: SettingInteger {}
extension UInt16: SettingInteger {}
extension UInt32: SettingInteger {}
extension UInt64: SettingInteger {}

/// Floating-point numbers store as `.double`, and also read an `.integer` that converts exactly.
public protocol SettingFloatingPoint: SettingValueConvertible, BinaryFloatingPoint {}

extension SettingFloatingPoint {
    /// Reads a `.double`, or an `.integer` that this type represents exactly.
    public init(settingValue: SettingValue) throws(SettingsError) {
        switch settingValue {
        case .double(let value):
            self = Self(value)
        case .integer(let value):
            guard let exact = Self(exactly: value) else {
                throw .typeMismatch(key: nil, stored: settingValue, expected: Self.self)
            }
            self = exact
        default:
            throw .typeMismatch(key: nil, stored: settingValue, expected: Self.self)
        }
    }

    /// Stores as `.double`.
    public func settingValue() -> SettingValue? { .double(Double(self)) }
}

extension Double: SettingFloatingPoint {}
extension Float: SettingFloatingPoint {}
