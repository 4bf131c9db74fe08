extension SettingValueConvertible where Self: RawRepresentable, RawValue == String {
    /// Reads a `.string` holding one of the raw values.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = try Self.fromStringRawValue(settingValue)
    }

    /// Stores the raw value as `.string`.
    public func settingValue() -> SettingValue? { .string(rawValue) }
}

extension SettingValueConvertible where Self: RawRepresentable, RawValue == Int {
    /// Reads an `.integer` holding one of the raw values.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = try Self.fromIntRawValue(settingValue)
    }

    /// Stores the raw value as `.integer`.
    public func settingValue() -> SettingValue? { .integer(Int64(rawValue)) }
}

extension SettingValueConvertible where Self: Codable {
    /// Decodes the type from its structured stored form.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = try SettingValueDecoder.decode(Self.self, from: settingValue)
    }

    /// Encodes the type into a structured value (dictionaries, arrays and scalars, not a string).
    public func settingValue() throws(SettingsError) -> SettingValue? {
        try SettingValueEncoder.encode(self)
    }
}

// A type both raw-representable and Codable (most enums) stores its raw value, like one that is
// not; these overloads only settle which of the extensions above applies.
extension SettingValueConvertible where Self: RawRepresentable & Codable, RawValue == String {
    /// Reads a `.string` holding one of the raw values.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = try Self.fromStringRawValue(settingValue)
    }

    /// Stores the raw value as `.string`.
    public func settingValue() -> SettingValue? { .string(rawValue) }
}

extension SettingValueConvertible where Self: RawRepresentable & Codable, RawValue == Int {
    /// Reads an `.integer` holding one of the raw values.
    public init(settingValue: SettingValue) throws(SettingsError) {
        self = try Self.fromIntRawValue(settingValue)
    }

    /// Stores the raw value as `.integer`.
    public func settingValue() -> SettingValue? { .integer(Int64(rawValue)) }
}

extension RawRepresentable where RawValue == String {
    static func fromStringRawValue(_ stored: SettingValue) throws(SettingsError) -> Self {
        guard case .string(let raw) = stored, let value = Self(rawValue: raw) else {
            throw .typeMismatch(key: nil, stored: stored, expected: Self.self)
        }
        return value
    }
}

extension RawRepresentable where RawValue == Int {
    static func fromIntRawValue(_ stored: SettingValue) throws(SettingsError) -> Self {
        guard case .integer(let raw) = stored, let exact = Int(exactly: raw),
            let value = Self(rawValue: exact)
        else {
            throw .typeMismatch(key: nil, stored: stored, expected: Self.self)
        }
        return value
    }
}
