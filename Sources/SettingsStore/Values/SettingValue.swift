#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A stored setting: the value types that property lists and `NSUbiquitousKeyValueStore` hold.
///
/// Every case round-trips losslessly through the database and the wire: an integer stays an
/// integer, `0.1` stays `0.1`, a date keeps its exact time interval.
///
/// ```swift
/// let value: SettingValue = ["volume": 0.5, "muted": false, "presets": [1, 2, 3]]
/// ```
public enum SettingValue: Sendable, Hashable {
    /// A Boolean.
    case bool(Bool)
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A double-precision floating-point number.
    case double(Double)
    /// A Unicode string.
    case string(String)
    /// Raw bytes.
    case data(Data)
    /// A point in time.
    case date(Date)
    /// An ordered list of values.
    case array([SettingValue])
    /// A map from string keys to values.
    case dictionary([String: SettingValue])

    /// The name of a value's type, as used in messages, the CLI and the wire protocol.
    public enum Kind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// `SettingValue.bool`.
        case bool
        /// `SettingValue.integer`.
        case integer
        /// `SettingValue.double`.
        case double
        /// `SettingValue.string`.
        case string
        /// `SettingValue.data`.
        case data
        /// `SettingValue.date`.
        case date
        /// `SettingValue.array`.
        case array
        /// `SettingValue.dictionary`.
        case dictionary

        /// The raw name.
        public var description: String { rawValue }
    }

    /// The type of this value.
    public var kind: Kind {
        switch self {
        case .bool: .bool
        case .integer: .integer
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .array: .array
        case .dictionary: .dictionary
        }
    }
}

extension SettingValue: ExpressibleByBooleanLiteral {
    /// Creates a `.bool` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension SettingValue: ExpressibleByIntegerLiteral {
    /// Creates an `.integer` value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SettingValue: ExpressibleByFloatLiteral {
    /// Creates a `.double` value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension SettingValue: ExpressibleByStringLiteral {
    /// Creates a `.string` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension SettingValue: ExpressibleByArrayLiteral {
    /// Creates an `.array` value.
    public init(arrayLiteral elements: SettingValue...) { self = .array(elements) }
}

extension SettingValue: ExpressibleByDictionaryLiteral {
    /// Creates a `.dictionary` value; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, SettingValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

extension SettingValue: CustomStringConvertible {
    /// A compact, JSON-like rendering for people (not a stable format: use the JSON form for that).
    public var description: String {
        switch self {
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .data(let value): "<\(value.count) bytes>"
        case .date(let value): "@\(value.timeIntervalSince1970)"
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let values):
            "{"
                + values.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(
                    separator: ", ")
                + "}"
        }
    }
}
