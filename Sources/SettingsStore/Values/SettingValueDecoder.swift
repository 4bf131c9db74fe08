#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes `Decodable` values from structured `SettingValue`s, the inverse of `SettingValueEncoder`.
enum SettingValueDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from value: SettingValue) throws(SettingsError) -> T {
        do {
            return try ValueDecoder(value: value, codingPath: []).decodeValue(type)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(
                .typeMismatch, "type mismatch: stored \(value.kind), expected \(T.self): \(error)")
        }
    }
}

private struct ValueDecoder: Decoder {
    let value: SettingValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ expected: Any.Type) -> SettingsError {
        let place = codingPath.isEmpty ? "" : " at '\(codingPath.dotted)'"
        return SettingsError(
            .typeMismatch, "type mismatch: stored \(value.kind), expected \(expected)\(place)")
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is Date.Type, is Data.Type, is URL.Type, is SettingValue.Type:
            let convertible = type as? any SettingValueConvertible.Type
            guard let result = try convertible?.init(settingValue: value) as? T else { throw mismatch(type) }
            return result
        default:
            return try T(from: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let values) = value else { throw mismatch([String: SettingValue].self) }
        return KeyedDecodingContainer(KeyedValueDecoder<Key>(values: values, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let values) = value else { throw mismatch([SettingValue].self) }
        return UnkeyedValueDecoder(values: values, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(decoder: self)
    }
}

private struct KeyedValueDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let values: [String: SettingValue]
    let codingPath: [any CodingKey]
    var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { values[key.stringValue] == nil }

    func decoder(for key: Key) throws -> ValueDecoder {
        guard let value = values[key.stringValue] else {
            let path = (codingPath + [key]).dotted
            throw SettingsError(.typeMismatch, "type mismatch: missing value at '\(path)'")
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder(for: key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: values["super"] ?? .dictionary([:]), codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder(for: key)
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    package init(intValue: Int) { self.intValue = intValue }
    package init?(stringValue: String) { nil }
}

private struct UnkeyedValueDecoder: UnkeyedDecodingContainer {
    let values: [SettingValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex >= values.count }

    package init(values: [SettingValue], codingPath: [any CodingKey]) {
        self.values = values
        self.codingPath = codingPath
    }

    mutating func nextDecoder() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw SettingsError(.typeMismatch, "type mismatch: array too short at '\(codingPath.dotted)'")
        }
        defer { currentIndex += 1 }
        return ValueDecoder(
            value: values[currentIndex], codingPath: codingPath + [IndexKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try nextDecoder().decodeValue(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try nextDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try nextDecoder()
    }
}

private struct SingleValueDecoder: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }

    func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) }
    func decode(_ type: String.Type) throws -> String { try scalar(type) }
    func decode(_ type: Double.Type) throws -> Double { try scalar(type) }
    func decode(_ type: Float.Type) throws -> Float { try scalar(type) }
    func decode(_ type: Int.Type) throws -> Int { try scalar(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeValue(type)
    }

    private func scalar<T: SettingValueConvertible>(_ type: T.Type) throws -> T {
        do {
            return try T(settingValue: decoder.value)
        } catch {
            throw decoder.mismatch(type)
        }
    }
}
