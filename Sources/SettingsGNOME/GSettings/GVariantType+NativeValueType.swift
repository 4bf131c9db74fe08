package import SettingsStore

/// GVariant types as schemas declare them (GSettings' schemas, a JSON rule's `gvariant`): the
/// store asks them to check values, and the bridge writes values to dconf in them.
extension GVariantType: NativeValueType {
    package var field: String { "gvariant" }
    package var language: String { "GVariant" }
    package var text: String { description }

    /// The kind that holds values of this type.
    package var valueType: SchemaRule.ValueType {
        switch self {
        case .boolean: .bool
        case .byte, .int16, .uint16, .int32, .uint32, .int64, .uint64, .handle: .int
        case .double: .double
        case .string, .objectPath, .signature: .string
        case .variant: .any
        case .array(.byte): .data
        case .array(.dictEntry(let key, _)) where key.isStringType: .dictionary
        case .maybe, .array, .tuple, .dictEntry: .array
        }
    }

    package func check(_ value: SettingValue) throws(SettingsError) {
        _ = try GVariant(value, type: self)
    }

    /// Reads a native type field's text as a GVariant type (`SchemaExtensions.gnome`).
    @Sendable package static func native(_ text: String) throws(SettingsError) -> any NativeValueType {
        try GVariantType(text)
    }
}

extension SchemaRule {
    /// The rule's GVariant type, if it declares one: read from the declaration a daemon sent back
    /// too (`DeclaredNativeType`), whose text it parses (nil if that is no GVariant type).
    package var gvariantType: GVariantType? {
        get {
            guard let native = nativeType?.base, native.field == "gvariant" else { return nil }
            return native as? GVariantType ?? (try? GVariantType(native.text))
        }
        set { nativeType = newValue.map(NativeType.init) }
    }
}
