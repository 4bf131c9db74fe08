import SettingsStore

/// A GVariant value: what GSettings stores and dconf files hold, with its exact type.
///
/// Read one from GLib's text format with `GVariant(parsing:type:)`, print it with `text`, and
/// move between it and a `SettingValue` with `GVariant(_:type:)` and `settingValue` (the
/// mapping is in `docs/SCHEMA.md`).
package indirect enum GVariant: Hashable, Sendable {
    /// `b`
    case boolean(Bool)
    /// `y`
    case byte(UInt8)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `h`
    case handle(Int32)
    /// `d`
    case double(Double)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `g`
    case signature(String)
    /// `v`: a value with its own type.
    case variant(GVariant)
    /// `mT`: a value of `element`, or nothing.
    case maybe(element: GVariantType, GVariant?)
    /// `aT`: values of `element`.
    case array(element: GVariantType, [GVariant])
    /// `(T…)`
    case tuple([GVariant])
    /// `{KV}`
    case dictEntry(key: GVariant, value: GVariant)

    /// The value's type.
    package var type: GVariantType {
        switch self {
        case .boolean: .boolean
        case .byte: .byte
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .handle: .handle
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .variant: .variant
        case .maybe(let element, _): .maybe(element)
        case .array(let element, _): .array(element)
        case .tuple(let members): .tuple(members.map(\.type))
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        }
    }

    /// Whether `text` is a D-Bus object path: `/`, or `/` then names of `[A-Za-z0-9_]`
    /// separated by single slashes.
    static func isObjectPath(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        guard bytes.count > 1 else { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousWasSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                guard !previousWasSlash else { return false }
                previousWasSlash = true
            } else {
                guard byte < 0x80, Character(Unicode.Scalar(byte)).isASCIIWordCharacter else { return false }
                previousWasSlash = false
            }
        }
        return true
    }

    /// Whether `text` is a D-Bus type signature: complete types, none of them a maybe.
    static func isSignature(_ text: String) -> Bool {
        var scanner = GVariantType.Scanner(bytes: Array(text.utf8))
        while scanner.index < scanner.bytes.count {
            guard scanner.scan(depth: 0) != nil else { return false }
        }
        return !text.utf8.contains(UInt8(ascii: "m"))
    }
}

extension Character {
    fileprivate var isASCIIWordCharacter: Bool { isASCII && (isLetter || isNumber || self == "_") }
}
