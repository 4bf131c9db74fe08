#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension Bool: SettingValueConvertible {
    /// Reads a `.bool`.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .bool(let value) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: Bool.self)
        }
        self = value
    }

    /// Stores as `.bool`.
    public func settingValue() -> SettingValue? { .bool(self) }
}

extension String: SettingValueConvertible {
    /// Reads a `.string`.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .string(let value) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: String.self)
        }
        self = value
    }

    /// Stores as `.string`.
    public func settingValue() -> SettingValue? { .string(self) }
}

extension Data: SettingValueConvertible {
    /// Reads a `.data`.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .data(let value) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: Data.self)
        }
        self = value
    }

    /// Stores as `.data`.
    public func settingValue() -> SettingValue? { .data(self) }
}

extension Date: SettingValueConvertible {
    /// Reads a `.date`.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .date(let value) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: Date.self)
        }
        self = value
    }

    /// Stores as `.date`.
    public func settingValue() -> SettingValue? { .date(self) }
}

extension URL: SettingValueConvertible {
    /// Reads a `.string` holding a URL.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .string(let text) = settingValue, let url = URL(string: text) else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: URL.self)
        }
        self = url
    }

    /// Stores as `.string` (the absolute string).
    public func settingValue() -> SettingValue? { .string(absoluteString) }
}

extension UUID: SettingValueConvertible {
    /// Reads a `.string` holding a UUID.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .string(let text) = settingValue, let uuid = UUID(uuidString: text) else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: UUID.self)
        }
        self = uuid
    }

    /// Stores as `.string` (upper-case canonical form).
    public func settingValue() -> SettingValue? { .string(uuidString) }
}

extension Array: SettingValueConvertible where Element: SettingValueConvertible {
    /// Reads an `.array` whose every element converts.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .array(let values) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: [Element].self)
        }
        var result: [Element] = []
        result.reserveCapacity(values.count)
        for value in values { result.append(try Element(settingValue: value)) }
        self = result
    }

    /// Stores as `.array`; a `nil` element is refused.
    public func settingValue() throws(SettingsError) -> SettingValue? {
        var values: [SettingValue] = []
        values.reserveCapacity(count)
        for element in self { values.append(try element.requiredSettingValue()) }
        return .array(values)
    }
}

extension Dictionary: SettingValueConvertible where Key == String, Value: SettingValueConvertible {
    /// Reads a `.dictionary` whose every value converts.
    public init(settingValue: SettingValue) throws(SettingsError) {
        guard case .dictionary(let values) = settingValue else {
            throw .typeMismatch(key: nil, stored: settingValue, expected: [String: Value].self)
        }
        var result: [String: Value] = [:]
        result.reserveCapacity(values.count)
        for (key, value) in values { result[key] = try Value(settingValue: value) }
        self = result
    }

    /// Stores as `.dictionary`; a `nil` value is refused.
    public func settingValue() throws(SettingsError) -> SettingValue? {
        var values: [String: SettingValue] = [:]
        values.reserveCapacity(count)
        for (key, value) in self { values[key] = try value.requiredSettingValue() }
        return .dictionary(values)
    }
}
