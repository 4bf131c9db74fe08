internal import CDconf
package import SettingsStore

/// The user's dconf database through libdconf, used only on its `DconfConnection`'s thread.
///
/// Reads see the user's own values (`DCONF_READ_USER_VALUE`), never a site default; writes go
/// to `dconf-service` as one change set each and return dconf's tag for it, which the change
/// notification for that write carries back.
package final class DconfClient {
    private let api: CSettingsDconf
    let client: OpaquePointer

    init(api: CSettingsDconf) {
        self.api = api
        client = api.client_new()
    }

    deinit {
        api.object_unref(UnsafeMutableRawPointer(client))
    }

    /// The user's own value at the key `path`, or nil when it has none.
    ///
    /// - Throws: `invalidValue` when settingsd cannot read the value GLib printed (never seen).
    package func userValue(at path: String) throws(SettingsError) -> GVariant? {
        guard let value = api.client_read_full(client, path, CSETTINGS_DCONF_READ_USER_VALUE, nil) else {
            return nil
        }
        defer { api.variant_unref(value) }
        let type = String(cString: api.variant_get_type_string(value))
        let printed = api.variant_print(value, 0)
        defer { api.free(printed) }
        let text = String(cString: printed)
        do throws(SettingsError) {
            return try GVariant(parsing: text, type: try GVariantType(type))
        } catch {
            throw SettingsError(.invalidValue, "dconf's value at \(path) (\(type) \(text)): \(error.message)")
        }
    }

    /// The names in the dir `dir` (keys, and dirs ending in `/`), of every database.
    package func list(_ dir: String) -> [String] {
        var count: Int32 = 0
        guard let names = api.client_list(client, dir, &count) else { return [] }
        defer { api.strfreev(names) }
        return (0..<Int(count)).compactMap { names[$0].map { String(cString: $0) } }
    }

    /// Every key under `dir`, at any depth, that holds a user value.
    package func userKeys(under dir: String) -> [String] {
        var keys: [String] = []
        var pending = [dir]
        while let next = pending.popLast() {
            for name in list(next) {
                if name.hasSuffix("/") {
                    pending.append(next + name)
                } else if api.client_read_full(client, next + name, CSETTINGS_DCONF_READ_USER_VALUE, nil)
                    .map({ api.variant_unref($0) }) != nil
                {
                    keys.append(next + name)
                }
            }
        }
        return keys.sorted()
    }

    /// Whether the user may write the key `path` (false when the site's profile locks it).
    package func isWritable(_ path: String) -> Bool {
        api.client_is_writable(client, path) != 0
    }

    /// Writes `changes` (nil resets a key) as one change set.
    ///
    /// - Returns: dconf's tag for the write.
    /// - Throws: `io` with dconf's reason when the service refuses or cannot be reached.
    package func change(_ changes: [(path: String, value: GVariant?)]) throws(SettingsError) -> String? {
        let changeset = api.changeset_new()
        defer { api.changeset_unref(changeset) }
        for (path, value) in changes {
            guard let value else {
                api.changeset_set(changeset, path, nil)
                continue
            }
            var error: UnsafeMutablePointer<GError>?
            let type = value.type.description
            guard
                let parsed = type.withCString({ type in
                    api.variant_parse(OpaquePointer(type), value.text(annotated: false), nil, nil, &error)
                })
            else {
                let reason = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown"
                if let error { api.error_free(error) }
                throw SettingsError(.invalidValue, "GLib cannot read \(type) \(value.text): \(reason)")
            }
            api.changeset_set(changeset, path, parsed)
            api.variant_unref(parsed)
        }
        var tag: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<GError>?
        guard api.client_change_sync(client, changeset, &tag, nil, &error) != 0 else {
            let reason = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown"
            if let error { api.error_free(error) }
            throw SettingsError(.io, "dconf refused a change of \(changes.count) key(s): \(reason)")
        }
        defer { api.free(tag) }
        return tag.map { String(cString: $0) }
    }

    /// Starts change notifications for the keys under `dir`.
    package func watch(_ dir: String) {
        api.client_watch_sync(client, dir)
    }
}
