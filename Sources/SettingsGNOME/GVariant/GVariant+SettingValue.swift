package import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Between GVariant values and setting values (the table is in `docs/SCHEMA.md`).
///
/// Typed by a schema, a value maps to its natural setting value: integers of every width to
/// `.integer`, `ay` to `.data`, `a{sT}` to `.dictionary`, arrays, tuples and other dictionaries
/// to arrays, a maybe to an array of none or one. Without a type (a variant's content, or a key
/// no schema types), a value whose type the setting value implies (`true`, `5`, `['a']`) maps
/// to it as is, and any other keeps its type beside it: `{"$gvariant": "u", "$value": 7}`.
extension GVariant {
    /// The name of the member that carries the type of an untyped value that needs one.
    package static let typeMember = "$gvariant"
    /// The name of the member that carries the value of an untyped value that needs a type.
    package static let valueMember = "$value"

    /// The setting value that stands for this value where its type is known (a schema's).
    ///
    /// - Throws: `invalidValue` for a `uint64` above `Int64.max`, the largest integer kept.
    package func settingValue() throws(SettingsError) -> SettingValue {
        switch self {
        case .boolean(let value): return .bool(value)
        case .byte(let value): return .integer(Int64(value))
        case .int16(let value): return .integer(Int64(value))
        case .uint16(let value): return .integer(Int64(value))
        case .int32(let value), .handle(let value): return .integer(Int64(value))
        case .uint32(let value): return .integer(Int64(value))
        case .int64(let value): return .integer(value)
        case .uint64(let value):
            guard let integer = Int64(exactly: value) else {
                throw SettingsError(
                    .invalidValue,
                    "uint64 \(value) is above \(Int64.max), the largest integer settingsd keeps")
            }
            return .integer(integer)
        case .double(let value): return .double(value)
        case .string(let value), .objectPath(let value), .signature(let value): return .string(value)
        case .variant(let child): return try child.untypedSettingValue()
        case .maybe(_, let child):
            return .array(try child.map { child throws(SettingsError) in [try child.settingValue()] } ?? [])
        case .array(.byte, let children):
            return .data(Data(children.map { child in if case .byte(let byte) = child { byte } else { 0 } }))
        case .array(.dictEntry(let keyType, _), let entries) where keyType.isStringType:
            var members: [String: SettingValue] = [:]
            for case .dictEntry(.string(let key), let value) in entries.map(\.stringKeyed)
            where members[key] == nil {
                members[key] = try value.settingValue()
            }
            return .dictionary(members)
        case .array(_, let children), .tuple(let children):
            var values: [SettingValue] = []
            values.reserveCapacity(children.count)
            for child in children { values.append(try child.settingValue()) }
            return .array(values)
        case .dictEntry(let key, let value):
            return .array([try key.settingValue(), try value.settingValue()])
        }
    }

    /// The setting value that stands for this value where no type is known: the natural one
    /// when it implies this type, else the type and the natural value together.
    package func untypedSettingValue() throws(SettingsError) -> SettingValue {
        let natural = try settingValue()
        if Self.naturalType(of: natural) == type { return natural }
        return .dictionary([Self.typeMember: .string(type.description), Self.valueMember: natural])
    }

    /// The value of `type` that `value` stands for.
    ///
    /// - Throws: `invalidValue` naming the type and what does not fit it.
    package init(_ value: SettingValue, type: GVariantType) throws(SettingsError) {
        func mismatch(_ detail: String? = nil) -> SettingsError {
            SettingsError(
                .invalidValue,
                detail
                    ?? "\(value.kind) \(value.description.debugDescriptionTruncated) is not a GVariant '\(type)'"
            )
        }
        switch (type, value) {
        case (.boolean, .bool(let bool)): self = .boolean(bool)
        case (_, .integer(let integer)) where type.isInteger:
            guard let bounds = type.integerBounds, bounds.contains(integer) else {
                throw mismatch("\(integer) is out of range for GVariant '\(type)'")
            }
            switch type {
            case .byte: self = .byte(UInt8(integer))
            case .int16: self = .int16(Int16(integer))
            case .uint16: self = .uint16(UInt16(integer))
            case .int32: self = .int32(Int32(integer))
            case .handle: self = .handle(Int32(integer))
            case .uint32: self = .uint32(UInt32(integer))
            case .int64: self = .int64(integer)
            default: self = .uint64(UInt64(integer))
            }
        case (.double, .double(let double)): self = .double(double)
        case (.double, .integer(let integer)): self = .double(Double(integer))
        case (.string, .string(let text)), (.objectPath, .string(let text)), (.signature, .string(let text)):
            guard !text.utf8.contains(0) else {
                throw mismatch("a GVariant string cannot hold a NUL character")
            }
            switch type {
            case .objectPath:
                guard Self.isObjectPath(text) else {
                    throw mismatch("'\(text.debugDescriptionTruncated)' is not an object path")
                }
                self = .objectPath(text)
            case .signature:
                guard Self.isSignature(text) else {
                    throw mismatch("'\(text.debugDescriptionTruncated)' is not a type signature")
                }
                self = .signature(text)
            default: self = .string(text)
            }
        case (.variant, _): self = .variant(try GVariant(untyped: value))
        case (.maybe(let element), .array(let values)) where values.count <= 1:
            self = .maybe(
                element: element,
                try values.first.map { value throws(SettingsError) in try GVariant(value, type: element) })
        case (.array(.byte), .data(let data)): self = .array(element: .byte, data.map(GVariant.byte))
        case (.array(.dictEntry(let keyType, let valueType)), .dictionary(let members))
        where keyType.isStringType:
            var entries: [GVariant] = []
            entries.reserveCapacity(members.count)
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                entries.append(
                    .dictEntry(
                        key: try GVariant(.string(key), type: keyType),
                        value: try GVariant(member, type: valueType)))
            }
            self = .array(element: .dictEntry(key: keyType, value: valueType), entries)
        case (.array(let element), .array(let values)):
            var children: [GVariant] = []
            children.reserveCapacity(values.count)
            for value in values { children.append(try GVariant(value, type: element)) }
            self = .array(element: element, children)
        case (.tuple(let members), .array(let values)):
            guard members.count == values.count else {
                throw mismatch("a GVariant '\(type)' has \(members.count) members, not \(values.count)")
            }
            var children: [GVariant] = []
            for (member, value) in zip(members, values) { children.append(try GVariant(value, type: member)) }
            self = .tuple(children)
        case (.dictEntry(let keyType, let valueType), .array(let pair)) where pair.count == 2:
            self = .dictEntry(
                key: try GVariant(pair[0], type: keyType), value: try GVariant(pair[1], type: valueType))
        default:
            throw mismatch()
        }
    }

    /// The value that an untyped setting value stands for (see `untypedSettingValue()`).
    ///
    /// - Throws: `invalidValue` for a date (GVariant has no dates), or a typed member that
    ///   does not fit its type.
    package init(untyped value: SettingValue) throws(SettingsError) {
        if let (type, content) = Self.typed(value) {
            self = try GVariant(content, type: try GVariantType(type))
            return
        }
        guard let type = Self.naturalType(of: value) else {
            throw SettingsError(
                .invalidValue,
                "\(value.kind) \(value.description.debugDescriptionTruncated) has no GVariant form")
        }
        self = try GVariant(value, type: type)
    }

    /// The type and value of `{"$gvariant": TYPE, "$value": VALUE}`.
    private static func typed(_ value: SettingValue) -> (String, SettingValue)? {
        guard case .dictionary(let members) = value, members.count == 2,
            case .string(let type)? = members[typeMember], let content = members[valueMember]
        else { return nil }
        return (type, content)
    }

    /// The type a setting value implies without one given, or nil when it implies none (a
    /// date, a typed member, or a container of such).
    static func naturalType(of value: SettingValue) -> GVariantType? {
        switch value {
        case .bool: return .boolean
        case .integer(let integer): return Int32(exactly: integer) == nil ? .int64 : .int32
        case .double: return .double
        case .string: return .string
        case .data: return .array(.byte)
        case .date: return nil
        case .dictionary(let members):
            guard typed(value) == nil, members.values.allSatisfy(hasUntypedForm) else { return nil }
            return .array(.dictEntry(key: .string, value: .variant))
        case .array(let elements):
            let types = elements.map(naturalType(of:))
            if let first = types.first, let element = first, types.allSatisfy({ $0 == element }) {
                return .array(element)
            }
            // Each element once: a typed one is checked by its type, not inferred again.
            return zip(elements, types).allSatisfy { $1 != nil || hasUntypedForm($0) }
                ? .array(.variant) : nil
        }
    }

    private static func hasUntypedForm(_ value: SettingValue) -> Bool {
        if let (type, _) = typed(value) { return (try? GVariantType(type)) != nil }
        return naturalType(of: value) != nil
    }

    /// A dictionary entry whose object-path or signature key reads as a string key.
    private var stringKeyed: GVariant {
        guard case .dictEntry(let key, let value) = self else { return self }
        switch key {
        case .objectPath(let text), .signature(let text): return .dictEntry(key: .string(text), value: value)
        default: return self
        }
    }
}

extension GVariantType {
    /// `s`, `o` or `g`.
    var isStringType: Bool { self == .string || self == .objectPath || self == .signature }
}
