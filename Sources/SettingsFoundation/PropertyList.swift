import CoreFoundation
import Foundation
import SettingsDaemonClient
import SettingsStore
import SettingsSync

/// Between Foundation's property-list values (what `UserDefaults` and
/// `NSUbiquitousKeyValueStore` take and return) and setting values.
enum PropertyList {
    /// The setting value for a property-list value: numbers by their type (an `NSNumber` made
    /// from a `Bool` stays a boolean), URLs as their path (as swift-corelibs-foundation stores
    /// them), strings, data, dates, arrays and string-keyed dictionaries.
    ///
    /// - Throws: `invalidValue` naming what is not a property-list value.
    static func settingValue(_ value: Any) throws(SettingsError) -> SettingValue {
        try settingValue(value, depth: 0)
    }

    /// `settingValue(_:)` inside `depth` arrays or dictionaries: deeper than a stored value may
    /// nest is refused before going on, so a cyclic `NSArray` or a value nested 200,000 deep is an
    /// error, not a stack overflow.
    private static func settingValue(_ value: Any, depth: Int) throws(SettingsError) -> SettingValue {
        // Foundation's containers first, read through CoreFoundation: swift-corelibs-foundation
        // bridges an NSArray's elements whole (as `[Any]`) on any cast or element access, and
        // never returns from one that holds itself.
        if type(of: value) is NSArray.Type {
            return try foundationArray(unsafeDowncast(value as AnyObject, to: NSArray.self), depth: depth)
        }
        if type(of: value) is NSDictionary.Type {
            return try foundationDictionary(
                unsafeDowncast(value as AnyObject, to: NSDictionary.self), depth: depth)
        }
        // Swift's containers by conformance, which casts nothing (a cast to `[Any]` of a value
        // that is not one bridges it through Foundation, whole).
        if let array = value as? any PropertyListArray {
            try checkDepth(depth)
            var elements: [SettingValue] = []
            for element in array.propertyListElements {
                elements.append(try settingValue(element, depth: depth + 1))
            }
            return .array(elements)
        }
        if let dictionary = value as? any PropertyListDictionary {
            try checkDepth(depth)
            var members: [String: SettingValue] = [:]
            for (key, member) in dictionary.propertyListMembers {
                guard let name = key as? String else {
                    throw SettingsError(.invalidValue, "a property-list dictionary's keys must be strings")
                }
                members[name] = try settingValue(member, depth: depth + 1)
            }
            return .dictionary(members)
        }
        // By the exact type: on Linux `as?` bridges through NSNumber and NSString, so a `Bool`
        // casts to `Int` and an `Int` to `String`.
        let type = type(of: value)
        if type == AnyHashable.self, let hashable = value as? AnyHashable {
            return try settingValue(hashable.base, depth: depth)
        }
        if type is NSNumber.Type, let number = value as? NSNumber { return number.settingValue }
        if let integer = integer(value) { return .integer(integer) }
        if type == Bool.self, let value = value as? Bool { return .bool(value) }
        if type == Double.self, let value = value as? Double { return .double(value) }
        if type == Float.self, let value = value as? Float { return .double(Double(value)) }
        if type == String.self || type is NSString.Type, let value = value as? String {
            return .string(value)
        }
        if type == Data.self || type is NSData.Type, let value = value as? Data { return .data(value) }
        if type == Date.self || type is NSDate.Type, let value = value as? Date { return .date(value) }
        if type == URL.self, let value = value as? URL { return .string(value.absoluteURL.path) }
        if type is NSURL.Type, let value = value as? NSURL { return .string(value.absoluteURL?.path ?? "") }
        throw SettingsError(.invalidValue, "\(type) is not a property-list value")
    }

    /// Throws unless a container may hold another at `depth` (deeper than a stored value nests).
    private static func checkDepth(_ depth: Int) throws(SettingsError) {
        guard depth < SettingValue.maximumNestingDepth else {
            throw SettingsError(
                .invalidValue,
                "a property list nested deeper than \(SettingValue.maximumNestingDepth) levels (or containing itself) cannot be stored"
            )
        }
    }

    /// An `NSArray`'s elements, each taken as the object it holds (no bridging of containers).
    private static func foundationArray(_ array: NSArray, depth: Int) throws(SettingsError) -> SettingValue {
        try checkDepth(depth)
        let list = unsafeBitCast(array, to: CFArray.self)
        var elements: [SettingValue] = []
        for index in 0..<CFArrayGetCount(list) {
            guard let raw = CFArrayGetValueAtIndex(list, index) else { continue }
            let element = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
            elements.append(try member(element, at: Int(index), in: array, depth: depth))
        }
        return .array(elements)
    }

    /// An `NSDictionary`'s members, keys as strings, values as `foundationArray` takes elements.
    private static func foundationDictionary(_ dictionary: NSDictionary, depth: Int) throws(SettingsError)
        -> SettingValue
    {
        try checkDepth(depth)
        let table = unsafeBitCast(dictionary, to: CFDictionary.self)
        let count = CFDictionaryGetCount(table)
        var keys = [UnsafeRawPointer?](repeating: nil, count: count)
        var values = [UnsafeRawPointer?](repeating: nil, count: count)
        CFDictionaryGetKeysAndValues(table, &keys, &values)
        var members: [String: SettingValue] = [:]
        for (key, value) in zip(keys, values) {
            guard let key, let value else { continue }
            let name = Unmanaged<AnyObject>.fromOpaque(key).takeUnretainedValue()
            guard type(of: name) is NSString.Type, let text = name as? String else {
                throw SettingsError(.invalidValue, "a property-list dictionary's keys must be strings")
            }
            let member = Unmanaged<AnyObject>.fromOpaque(value).takeUnretainedValue()
            members[text] = try settingValue(
                leaf(member, orBridged: { dictionary[text] as Any }), depth: depth + 1)
        }
        return .dictionary(members)
    }

    /// An array's element: a container as itself, anything else as Foundation returns it.
    private static func member(_ element: AnyObject, at index: Int, in array: NSArray, depth: Int)
        throws(SettingsError) -> SettingValue
    {
        try settingValue(leaf(element, orBridged: { array.object(at: index) }), depth: depth + 1)
    }

    /// `object` when it is a Foundation container (walked without bridging), else the value
    /// `bridged` returns (a number, string, date or data: bridging it reads nothing further).
    private static func leaf(_ object: AnyObject, orBridged bridged: () -> Any) -> Any {
        type(of: object) is NSArray.Type || type(of: object) is NSDictionary.Type ? object : bridged()
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

/// Swift's arrays, as `PropertyList` walks them without casting.
private protocol PropertyListArray {
    var propertyListElements: [Any] { get }
}

extension Array: PropertyListArray {
    fileprivate var propertyListElements: [Any] { map { $0 as Any } }
}

/// Swift's dictionaries, as `PropertyList` walks them without casting.
private protocol PropertyListDictionary {
    var propertyListMembers: [(key: Any, value: Any)] { get }
}

extension Dictionary: PropertyListDictionary {
    fileprivate var propertyListMembers: [(key: Any, value: Any)] { map { ($0.key as Any, $0.value as Any) } }
}
