/// What an integration adds to the policy the store reads (`SettingsPolicy.load`): rules read
/// before every schema file, schemas of its own format read from the same folders, and the type
/// language that schema files' native type fields are written in. `SettingsGNOME` makes the
/// GNOME ones (`SchemaExtensions.gnome`: the keys that stay on one machine, GSettings' XML
/// schemas, GVariant types); with `none` the store reads settingsd's JSON schemas alone.
public struct SchemaExtensions: Sendable {
    /// Rules read before every schema file, which any schema file may override.
    package var builtInRules: [SchemaRule] = []
    /// Readers of schema files of other formats in the schema folders, read after settingsd's.
    package var sources: [any SchemaSource] = []
    /// Readers of native types, by the schema field that declares them (`gvariant`).
    package var nativeTypes: [String: @Sendable (String) throws(SettingsError) -> any NativeValueType] = [:]

    /// Extensions with these parts.
    package init(
        builtInRules: [SchemaRule] = [], sources: [any SchemaSource] = [],
        nativeTypes: [String: @Sendable (String) throws(SettingsError) -> any NativeValueType] = [:]
    ) {
        self.builtInRules = builtInRules
        self.sources = sources
        self.nativeTypes = nativeTypes
    }

    /// No extension: settingsd's JSON schemas, system defaults and locks alone.
    public static let none = SchemaExtensions()
}

/// Schemas of another format than settingsd's, read from the schema folders (GSettings'
/// `*.gschema.xml`).
package protocol SchemaSource: Sendable {
    /// The rules of every schema of this format in `directories`; what could not be read is said
    /// in `warnings` (one file's failure never stops the others, or the daemon).
    func rules(in directories: [String]) -> (rules: [SchemaRule], warnings: [String])
}
