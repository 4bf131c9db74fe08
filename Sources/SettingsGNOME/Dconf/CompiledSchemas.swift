import CDconf
package import SettingsStore

/// The schemas compiled into one folder's `gschemas.compiled`, read through GIO's own schema
/// source (`g_settings_schema_source_new_from_directory`), opened on first use as libdconf is:
/// what GSettings itself reads in a Flatpak app.
package struct CompiledSchemas: Sendable, Equatable {
    /// One schema: its id, its path (nil: relocatable), its keys.
    package struct Schema: Sendable, Equatable {
        /// The schema's id (`org.gnome.TextEditor`).
        package var id: String
        /// The path it is stored at (`/org/gnome/TextEditor/`); nil for a relocatable schema.
        package var path: String?
        /// Its keys, by name.
        package var keys: [Key]
    }

    /// One key, as GIO reports it.
    package struct Key: Sendable, Equatable {
        /// The key's name.
        package var name: String
        /// Its GVariant type string (`s`, `ai`, `(ii)`).
        package var type: String
        /// Its default, as GLib prints it (unannotated).
        package var defaultText: String
        /// Its range, as GLib prints the `(sv)`: `('type', <@s ''>)`, `('enum', <['a', 'b']>)`,
        /// `('flags', <[…]>)` or `('range', <(0, 100)>)`.
        package var rangeText: String
        /// One line about it.
        package var summary: String?
        /// More about it.
        package var description: String?
    }

    /// Every schema of the folder.
    package var schemas: [Schema]

    /// The schemas compiled in `directory`.
    ///
    /// - Throws: `io` when GIO cannot be loaded, `invalidValue` when the folder holds no
    ///   readable `gschemas.compiled`.
    package init(directory: String) throws(SettingsError) {
        let gio = try Self.functions()
        var error: UnsafeMutablePointer<GError>?
        guard let source = gio.source_new_from_directory(directory, nil, 0, &error) else {
            let reason = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unreadable"
            if let error { gio.error_free(error) }
            throw SettingsError(
                .invalidValue, "the compiled schemas in '\(directory)' cannot be read: \(reason)",
                path: directory)
        }
        defer { gio.source_unref(source) }
        var fixed: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var relocatable: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        gio.source_list_schemas(source, 0, &fixed, &relocatable)
        defer {
            gio.strfreev(fixed)
            gio.strfreev(relocatable)
        }
        var schemas: [Schema] = []
        for id in Self.strings(fixed) + Self.strings(relocatable) {
            guard let schema = gio.source_lookup(source, id, 0) else { continue }
            defer { gio.schema_unref(schema) }
            let path = gio.schema_get_path(schema).map { String(cString: $0) }
            let names = gio.schema_list_keys(schema)
            defer { gio.strfreev(names) }
            let keys = Self.strings(names).sorted().map { name in
                let key = gio.schema_get_key(schema, name)
                defer { gio.key_unref(key) }
                return Key(
                    name: name,
                    type: Self.take(gio.variant_type_dup_string(gio.key_get_value_type(key)), gio),
                    defaultText: Self.print(gio.key_get_default_value(key), gio),
                    rangeText: Self.print(gio.key_get_range(key), gio),
                    summary: gio.key_get_summary(key).map { String(cString: $0) },
                    description: gio.key_get_description(key).map { String(cString: $0) })
            }
            schemas.append(Schema(id: id, path: path, keys: keys))
        }
        self.schemas = schemas.sorted { $0.id < $1.id }
    }

    /// GIO's and GLib's functions, loaded on first use.
    private static let loaded: Result<CSettingsGio, SettingsError> = {
        let api = UnsafeMutablePointer<CSettingsGio>.allocate(capacity: 1)
        defer { api.deallocate() }
        if let reason = csettings_gio_load(api) {
            return .failure(
                SettingsError(
                    .io,
                    "reading compiled GSettings schemas needs GIO (libgio-2.0.so.0): \(String(cString: reason))"
                ))
        }
        return .success(api.move())
    }()

    private static func functions() throws(SettingsError) -> CSettingsGio {
        try loaded.get()
    }

    private static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        while let item = list[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }

    private static func take(_ text: UnsafeMutablePointer<CChar>, _ gio: CSettingsGio) -> String {
        defer { gio.free(text) }
        return String(cString: text)
    }

    private static func print(_ value: OpaquePointer, _ gio: CSettingsGio) -> String {
        defer { gio.variant_unref(value) }
        return take(gio.variant_print(value, 0), gio)
    }
}

extension CSettingsGio: @retroactive @unchecked Sendable {}  // immutable; its libraries stay loaded
