#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes `Encodable` values into structured `SettingValue`s.
///
/// `Date`, `Data` and `URL` keep their natural stored forms (`.date`, `.data`, `.string`); a
/// `nil` optional property is left out. An explicit `nil` inside a collection cannot be stored.
enum SettingValueEncoder {
    static func encode<T: Encodable>(_ value: T) throws(SettingsError) -> SettingValue {
        do {
            return try EncodingNode.encode(value, codingPath: [])
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.invalidValue, "cannot encode \(T.self): \(error)")
        }
    }
}

/// One value under construction: empty, a finished scalar, or a container of further nodes.
private final class EncodingNode {
    enum Content {
        case empty
        case single(SettingValue)
        case keyed([String: EncodingNode])
        case unkeyed([EncodingNode])
    }

    var content: Content = .empty

    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> SettingValue {
        let node = EncodingNode()
        try node.store(value, codingPath: codingPath)
        return try node.resolve(codingPath: codingPath)
    }

    func store<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        switch value {
        case let date as Date: content = .single(.date(date))
        case let data as Data: content = .single(.data(data))
        case let url as URL: content = .single(.string(url.absoluteString))
        case let setting as SettingValue: content = .single(setting)
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }

    func resolve(codingPath: [any CodingKey]) throws -> SettingValue {
        switch content {
        case .empty:
            throw SettingsError(.invalidValue, "nothing was encoded at '\(codingPath.dotted)'")
        case .single(let value):
            return value
        case .keyed(let children):
            var values: [String: SettingValue] = [:]
            for (key, child) in children { values[key] = try child.resolve(codingPath: codingPath) }
            return .dictionary(values)
        case .unkeyed(let children):
            return .array(try children.map { try $0.resolve(codingPath: codingPath) })
        }
    }

    func keyedChild(_ key: String) -> EncodingNode {
        var children: [String: EncodingNode] = [:]
        if case .keyed(let existing) = content {
            children = existing
            content = .empty  // Drop the second reference so the insert below does not copy.
        }
        let child = EncodingNode()
        children[key] = child
        content = .keyed(children)
        return child
    }

    func appendChild() -> EncodingNode {
        var children: [EncodingNode] = []
        if case .unkeyed(let existing) = content {
            children = existing
            content = .empty
        }
        let child = EncodingNode()
        children.append(child)
        content = .unkeyed(children)
        return child
    }
}

private struct NodeEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed([:]) }
        return KeyedEncodingContainer(KeyedNodeEncoder<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed([]) }
        return UnkeyedNodeEncoder(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeEncoder(node: node, codingPath: codingPath)
    }
}

private struct KeyedNodeEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        throw SettingsError(.invalidValue, "nil cannot be stored at '\((codingPath + [key]).dotted)'")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.keyedChild(key.stringValue).store(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        NodeEncoder(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key])
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.keyedChild("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeEncoder: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int {
        guard case .unkeyed(let children) = node.content else { return 0 }
        return children.count
    }

    mutating func encodeNil() throws {
        throw SettingsError(.invalidValue, "nil cannot be stored in an array at '\(codingPath.dotted)'")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try node.appendChild().store(value, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        NodeEncoder(node: node.appendChild(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appendChild(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.appendChild(), codingPath: codingPath)
    }
}

private struct SingleNodeEncoder: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        throw SettingsError(.invalidValue, "nil cannot be stored at '\(codingPath.dotted)'")
    }

    mutating func encode(_ value: Bool) throws { node.content = .single(.bool(value)) }
    mutating func encode(_ value: String) throws { node.content = .single(.string(value)) }
    mutating func encode(_ value: Double) throws { node.content = .single(.double(value)) }
    mutating func encode(_ value: Float) throws { node.content = .single(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try node.store(value, codingPath: codingPath)
    }

    private func encodeInteger<T: FixedWidthInteger>(_ value: T) throws {
        guard let exact = Int64(exactly: value) else {
            throw SettingsError(
                .invalidValue, "\(value) at '\(codingPath.dotted)' does not fit a 64-bit integer")
        }
        node.content = .single(.integer(exact))
    }
}

extension [any CodingKey] {
    /// The path as `a.b.0.c`, or `<root>` when empty.
    var dotted: String {
        isEmpty ? "<root>" : map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
