#if canImport(Glibc)
    import Glibc
#endif

/// Where Flatpak keeps an app's settings and its compiled schemas: the keyfile GLib's keyfile
/// backend writes inside the sandbox (`~/.var/app/APP_ID/config/glib-2.0/settings/keyfile`,
/// its `XDG_CONFIG_HOME` being `~/.var/app/APP_ID/config`) and the schemas the app ships
/// (`INSTALLATION/app/APP_ID/current/active/files/share/glib-2.0/schemas`, the user's
/// installation and the system's).
package struct FlatpakLayout: Sendable, Equatable {
    /// The user's home (`~`).
    package var home: String
    /// The installations, in the order their apps' schemas are looked for.
    package var installations: [String]

    /// A layout at `home` with `installations`.
    package init(home: String, installations: [String]) {
        self.home = home
        self.installations = installations
    }

    /// The user's layout: `$HOME`, and the installations Flatpak uses (`$FLATPAK_USER_DIR`, else
    /// `~/.local/share/flatpak`; `$FLATPAK_SYSTEM_DIR`, else `/var/lib/flatpak`).
    package static var current: FlatpakLayout {
        let home = Self.environment("HOME") ?? "/"
        return FlatpakLayout(
            home: home,
            installations: [
                Self.environment("FLATPAK_USER_DIR") ?? home + "/.local/share/flatpak",
                Self.environment("FLATPAK_SYSTEM_DIR") ?? "/var/lib/flatpak",
            ])
    }

    /// The folder `~/.var/app/APP_ID` of `app`: nothing the bridge writes goes outside it.
    package func appFolder(_ app: String) -> String {
        home + "/.var/app/" + app
    }

    /// The app's settings keyfile.
    package func keyfile(_ app: String) -> String {
        appFolder(app) + "/config/glib-2.0/settings/keyfile"
    }

    /// The folder of the app's compiled schemas, in the first installation that has them.
    package func schemaFolder(_ app: String) -> String? {
        installations.lazy.map { $0 + "/app/" + app + "/current/active/files/share/glib-2.0/schemas" }
            .first { access($0 + "/gschemas.compiled", R_OK) == 0 }
    }

    /// The apps installed (with compiled schemas) or with a keyfile, sorted.
    package func apps() -> [String] {
        var apps = Set<String>()
        for installation in installations {
            for app in Self.entries(of: installation + "/app") where schemaFolder(app) != nil {
                apps.insert(app)
            }
        }
        for app in Self.entries(of: home + "/.var/app") where access(keyfile(app), F_OK) == 0 {
            apps.insert(app)
        }
        return apps.filter(Self.isAppID).sorted()
    }

    /// Whether `id` is a Flatpak app id: at least three names of letters, digits, `_` and `-`,
    /// dot-separated, none starting with a digit (what `flatpak` accepts; nothing else can name a
    /// folder path of ours).
    package static func isAppID(_ id: String) -> Bool {
        let names = id.split(separator: ".", omittingEmptySubsequences: false)
        guard names.count >= 3, id.utf8.count <= 255 else { return false }
        return names.allSatisfy { name in
            guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-"
            }
        }
    }

    private static func entries(of folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}
