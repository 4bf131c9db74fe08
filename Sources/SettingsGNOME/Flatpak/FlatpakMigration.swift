import Dispatch
package import SettingsStore
import Synchronization

/// `settingsd flatpak migrate APP_ID`: the user's dconf values of an app that moved to Flatpak
/// (GnuCash's case), copied into the app's keyfile, where the Flatpak build reads them. The keys
/// are those of the schemas the app ships (its `gschemas.compiled`); a key the keyfile already
/// holds keeps the keyfile's value (the app's own, newer). dconf is left as it is, for the host's
/// build of the app.
package struct FlatpakMigration: Sendable {
    /// The app.
    package let app: String
    /// The keyfile written.
    package let keyfile: String
    /// The keys copied: their dconf path and value text.
    package private(set) var copied: [(path: String, text: String)]
    /// The keys the keyfile already holds, left as they are.
    package private(set) var kept: [String]
    private let folder: String
    private var document: GLibKeyfile

    /// What migrating `app` in `layout` would do.
    ///
    /// - Throws: `invalidValue` when the app has no compiled schemas or its keyfile is refused;
    ///   `io` when dconf cannot be read.
    package init(app: String, layout: FlatpakLayout) throws(SettingsError) {
        guard FlatpakLayout.isAppID(app) else {
            throw SettingsError(.invalidValue, "'\(app)' is not a Flatpak app id (like org.gnome.TextEditor)")
        }
        guard let schemaFolder = layout.schemaFolder(app) else {
            throw SettingsError(
                .invalidValue,
                "\(app) ships no compiled GSettings schemas in \(layout.installations.joined(separator: " or ")): is it installed?"
            )
        }
        self.app = app
        keyfile = layout.keyfile(app)
        folder = layout.appFolder(app)
        document =
            try AppKeyfile.read(keyfile, inside: folder).map { text throws(SettingsError) in
                try GLibKeyfile(text: text)
            } ?? GLibKeyfile()
        let paths = try CompiledSchemas(directory: schemaFolder).schemas.flatMap { schema in
            schema.path.map { path in schema.keys.map { path + $0.name } } ?? []
        }
        var copied: [(path: String, text: String)] = []
        var kept: [String] = []
        for (path, value) in try Self.dconfValues(paths) {
            guard let (group, key) = AppKeyfile.split(path) else { continue }
            if document.value(group: group, key: key) != nil {
                kept.append(path)
            } else {
                copied.append((path, value.text(annotated: false)))
            }
        }
        self.copied = copied
        self.kept = kept
    }

    /// Writes the keys copied into the keyfile (atomically; the running app sees them at once).
    package func apply() throws(SettingsError) {
        guard !copied.isEmpty else { return }
        var changed = document
        for (path, text) in copied {
            guard let (group, key) = AppKeyfile.split(path) else { continue }
            changed.set(text, group: group, key: key)
        }
        try AppKeyfile.write(changed.text, to: keyfile, inside: folder)
    }

    /// The user's dconf values at `paths` (those without one are left out), read through libdconf.
    private static func dconfValues(_ paths: [String]) throws(SettingsError) -> [(String, GVariant)] {
        let connection = try DconfConnection(watching: []) { _, _, _ in }
        defer { connection.stop() }
        let result = Mutex<Result<[(String, GVariant)], SettingsError>>(.success([]))
        let done = DispatchSemaphore(value: 0)
        connection.perform { client in
            var values: [(String, GVariant)] = []
            do throws(SettingsError) {
                for path in paths {
                    if let value = try client.userValue(at: path) { values.append((path, value)) }
                }
                result.withLock { $0 = .success(values) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0 }.get()
    }
}
