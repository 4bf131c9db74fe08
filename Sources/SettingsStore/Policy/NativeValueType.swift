/// A type a schema declares in another type language than settingsd's own (GSettings' GVariant
/// types: `u`, `as`, `(ii)`): values must have that form, and travel to that system in it. The
/// store keeps the declaration and asks it to check values; the language's code lives with the
/// integration that speaks it (`SettingsGNOME`), handed in through `SchemaExtensions`.
package protocol NativeValueType: Sendable {
    /// The schema field that declares it (`gvariant`).
    var field: String { get }
    /// The type language's name, for messages (`GVariant`).
    var language: String { get }
    /// The type in its language's text (`u`).
    var text: String { get }
    /// The kind its values are held as.
    var valueType: SchemaRule.ValueType { get }
    /// Throws unless `value` has this type.
    func check(_ value: SettingValue) throws(SettingsError)
}

/// A native type read back from a daemon's answer (`describe`, `schema`), where the language's
/// code need not be at hand: it names the type, and checks nothing (the daemon did).
package struct DeclaredNativeType: NativeValueType {
    package let field: String
    package let language: String
    package let text: String
    package let valueType: SchemaRule.ValueType

    package func check(_ value: SettingValue) throws(SettingsError) {}
}

extension SchemaRule {
    /// A rule's native type, compared by its field and text.
    package struct NativeType: Equatable, Sendable {
        /// The declaration, and its checks.
        package let base: any NativeValueType

        package init(_ base: any NativeValueType) {
            self.base = base
        }

        package static func == (lhs: NativeType, rhs: NativeType) -> Bool {
            lhs.base.field == rhs.base.field && lhs.base.text == rhs.base.text
        }
    }

    /// The schema fields that declare a native type, and the languages they name: the schema
    /// format is settingsd's (docs/SCHEMA.md), the languages' code is an integration's.
    package static let nativeTypeFields = ["gvariant": "GVariant"]
}
