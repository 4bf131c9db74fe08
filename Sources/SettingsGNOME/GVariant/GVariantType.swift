package import SettingsStore

/// A definite GVariant type, as GSettings schemas and dconf name them (`b`, `u`, `a(ss)`,
/// `a{sv}`, `mi`): the type system of GLib's GVariant, without indefinite types.
package indirect enum GVariantType: Hashable, Sendable, CustomStringConvertible {
    /// `b`
    case boolean
    /// `y`, an unsigned 8-bit integer.
    case byte
    /// `n`
    case int16
    /// `q`
    case uint16
    /// `i`
    case int32
    /// `u`
    case uint32
    /// `x`
    case int64
    /// `t`
    case uint64
    /// `h`, an index into a list of file descriptors (a signed 32-bit integer).
    case handle
    /// `d`
    case double
    /// `s`
    case string
    /// `o`, a D-Bus object path.
    case objectPath
    /// `g`, a D-Bus type signature.
    case signature
    /// `v`, a value of any type that carries its type.
    case variant
    /// `mT`, a value of `T` or nothing.
    case maybe(GVariantType)
    /// `aT`
    case array(GVariantType)
    /// `(T…)`, positional members.
    case tuple([GVariantType])
    /// `{KV}`, an entry of a dictionary; `a{KV}` is a dictionary. The key is a basic type.
    case dictEntry(key: GVariantType, value: GVariantType)

    /// Nesting deeper than this is refused, as GLib refuses values nested past 128 levels.
    static let maximumDepth = 64

    /// The type named by `text`.
    ///
    /// - Throws: `invalidValue` naming the text and where it stops being a type.
    package init(_ text: String) throws(SettingsError) {
        var scanner = Scanner(bytes: Array(text.utf8))
        guard let type = scanner.scan(depth: 0), scanner.index == scanner.bytes.count else {
            throw SettingsError(.invalidValue, "'\(text.debugDescriptionTruncated)' is not a GVariant type")
        }
        self = type
    }

    /// The type string.
    package var description: String {
        switch self {
        case .boolean: "b"
        case .byte: "y"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .handle: "h"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case .maybe(let element): "m\(element)"
        case .array(let element): "a\(element)"
        case .tuple(let members): "(" + members.map(\.description).joined() + ")"
        case .dictEntry(let key, let value): "{\(key)\(value)}"
        }
    }

    /// Whether the type is basic: a number, a Boolean or a string (a dictionary key must be).
    package var isBasic: Bool {
        switch self {
        case .variant, .maybe, .array, .tuple, .dictEntry: false
        default: true
        }
    }

    /// Whether values of the type are integers.
    var isInteger: Bool {
        switch self {
        case .byte, .int16, .uint16, .int32, .uint32, .int64, .uint64, .handle: true
        default: false
        }
    }

    /// The bounds of an integer type, as settingsd stores it (`t` stops at `Int64.max`).
    var integerBounds: ClosedRange<Int64>? {
        switch self {
        case .byte: 0...Int64(UInt8.max)
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .uint16: 0...Int64(UInt16.max)
        case .int32, .handle: Int64(Int32.min)...Int64(Int32.max)
        case .uint32: 0...Int64(UInt32.max)
        case .int64: Int64.min...Int64.max
        case .uint64: 0...Int64.max
        default: nil
        }
    }

    /// The keyword GLib's text format puts before a value of the type when it must be
    /// annotated (`uint32 7`), or nil when the type has none.
    var keyword: String? {
        switch self {
        case .boolean: "boolean"
        case .byte: "byte"
        case .int16: "int16"
        case .uint16: "uint16"
        case .int32: "int32"
        case .uint32: "uint32"
        case .int64: "int64"
        case .uint64: "uint64"
        case .handle: "handle"
        case .double: "double"
        case .string: "string"
        case .objectPath: "objectpath"
        case .signature: "signature"
        default: nil
        }
    }

    /// Reads one complete type from type-string bytes.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func scan(depth: Int) -> GVariantType? {
            guard depth < GVariantType.maximumDepth, index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "b"): return .boolean
            case UInt8(ascii: "y"): return .byte
            case UInt8(ascii: "n"): return .int16
            case UInt8(ascii: "q"): return .uint16
            case UInt8(ascii: "i"): return .int32
            case UInt8(ascii: "u"): return .uint32
            case UInt8(ascii: "x"): return .int64
            case UInt8(ascii: "t"): return .uint64
            case UInt8(ascii: "h"): return .handle
            case UInt8(ascii: "d"): return .double
            case UInt8(ascii: "s"): return .string
            case UInt8(ascii: "o"): return .objectPath
            case UInt8(ascii: "g"): return .signature
            case UInt8(ascii: "v"): return .variant
            case UInt8(ascii: "m"): return scan(depth: depth + 1).map(GVariantType.maybe)
            case UInt8(ascii: "a"): return scan(depth: depth + 1).map(GVariantType.array)
            case UInt8(ascii: "("):
                var members: [GVariantType] = []
                while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                    guard let member = scan(depth: depth + 1) else { return nil }
                    members.append(member)
                }
                guard index < bytes.count else { return nil }
                index += 1
                return .tuple(members)
            case UInt8(ascii: "{"):
                guard let key = scan(depth: depth + 1), key.isBasic, let value = scan(depth: depth + 1),
                    index < bytes.count, bytes[index] == UInt8(ascii: "}")
                else { return nil }
                index += 1
                return .dictEntry(key: key, value: value)
            default: return nil
            }
        }
    }
}
