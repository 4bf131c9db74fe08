import Foundation
import SettingsStore

/// Between Foundation's property-list values (what `UserDefaults` and
/// `NSUbiquitousKeyValueStore` take and return) and setting values.
enum PropertyList {
    /// The setting value for a property-list value: numbers by their type (an `NSNumber` made
    /// from a `Bool` stays a boolean), URLs as their path (as swift-corelibs-foundation stores
    /// them), strings, data, dates, arrays and string-keyed dictionaries.
    ///
    /// - Throws: `invalidValue` naming what is not a property-list value.
    static func settingValue(_ value: Any) throws(SettingsError) -> SettingValue {
        // By the exact type: on Linux `as?` bridges through NSNumber and NSString, so a `Bool`
        // casts to `Int` and an `Int` to `String`.
        let type = type(of: value)
        if type == AnyHashable.self, let hashable = value as? AnyHashable {
            return try settingValue(hashable.base)
        }
        if let number = value as? NSNumber, type is NSNumber.Type { return number.settingValue }
        if let integer = integer(value) { return .integer(integer) }
        if type == Bool.self, let value = value as? Bool { return .bool(value) }
        if type == Double.self, let value = value as? Double { return .double(value) }
        if type == Float.self, let value = value as? Float { return .double(Double(value)) }
        if type == String.self || type is NSString.Type, let value = value as? String {
            return .string(value)
        }
        if type == Data.self || type is NSData.Type, let value = value as? Data { return .data(value) }
        if type == Date.self || type is NSDate.Type, let value = value as? Date { return .date(value) }
        if let value = value as? URL { return .string(value.absoluteURL.path) }
        if let value = value as? NSURL { return .string(value.absoluteURL?.path ?? "") }
        if let value = value as? [String: Any] {
            var members: [String: SettingValue] = [:]
            for (key, member) in value { members[key] = try settingValue(member) }
            return .dictionary(members)
        }
        if let value = value as? [Any] {
            var elements: [SettingValue] = []
            elements.reserveCapacity(value.count)
            for element in value { elements.append(try settingValue(element)) }
            return .array(elements)
        }
        throw SettingsError(.invalidValue, "\(type) is not a property-list value")
    }

    /// A fixed-width Swift integer as an `Int64` (a `UInt64` above `Int64.max` is not one).
    private static func integer(_ value: Any) -> Int64? {
        switch value {
        case let value as Int where type(of: value) == Int.self: Int64(value)
        case let value as Int8 where type(of: value) == Int8.self: Int64(value)
        case let value as Int16 where type(of: value) == Int16.self: Int64(value)
        case let value as Int32 where type(of: value) == Int32.self: Int64(value)
        case let value as Int64 where type(of: value) == Int64.self: value
        case let value as UInt where type(of: value) == UInt.self: Int64(exactly: value)
        case let value as UInt8 where type(of: value) == UInt8.self: Int64(value)
        case let value as UInt16 where type(of: value) == UInt16.self: Int64(value)
        case let value as UInt32 where type(of: value) == UInt32.self: Int64(value)
        case let value as UInt64 where type(of: value) == UInt64.self: Int64(exactly: value)
        default: nil
        }
    }

    /// The property-list value `UserDefaults.object(forKey:)` returns for a setting value, in
    /// the Swift types Foundation returns (`Bool`, `Int`, `Double`, `String`, `Data`, `Date`,
    /// `[Any]`, `[String: Any]`).
    static func object(_ value: SettingValue) -> Any {
        switch value {
        case .bool(let value): value
        case .integer(let value): Int(value)
        case .double(let value): value
        case .string(let value): value
        case .data(let value): value
        case .date(let value): value
        case .array(let elements): elements.map(object)
        case .dictionary(let members): members.mapValues(object)
        }
    }
}

extension NSNumber {
    /// The setting value for the number: a boolean, an integer, or a double, by how it was made.
    fileprivate var settingValue: SettingValue {
        let code = String(cString: objCType)
        // corelibs makes a boolean NSNumber a subclass with type "c"; Int8 numbers are "i".
        if code == "c" || code == "B", type(of: self) != NSNumber.self { return .bool(boolValue) }
        if code == "f" || code == "d" { return .double(doubleValue) }
        if code == "Q" || code == "L", uint64Value > UInt64(Int64.max) { return .double(doubleValue) }
        return .integer(int64Value)
    }
}
