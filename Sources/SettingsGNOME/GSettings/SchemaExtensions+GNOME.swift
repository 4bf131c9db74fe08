public import SettingsStore

/// GNOME's additions to a policy: the keys that stay on one machine (`MachineKeys`), GSettings'
/// XML schemas in the schema folders, and GVariant types in schema files.
extension SchemaExtensions {
    /// The GNOME extensions, as the daemon and the command line read policies with them.
    public static let gnome = SchemaExtensions(
        builtInRules: MachineKeys.rules, sources: [GSettingsSchemaSource()],
        nativeTypes: ["gvariant": GVariantType.native])
}

/// GSettings' `*.gschema.xml`, `*.enums.xml` and `*.gschema.override` files of the schema folders.
package struct GSettingsSchemaSource: SchemaSource {
    package init() {}

    package func rules(in directories: [String]) -> (rules: [SchemaRule], warnings: [String]) {
        let schemas = GSettingsSchemas(directories: directories)
        return (schemas.rules, schemas.failedFiles.map { "skipped GSettings schema \($0)" })
    }
}
