package import SettingsStore

/// A site's dconf keyfile database (`/etc/dconf/db/local.d`): its keyfiles are system defaults,
/// its `locks/` files lock keys, as `dconf update` would compile them.
package struct DconfSystemDatabase: Sendable {
    /// The defaults, by settingsd key, typed by the schema given.
    package var defaults: [String: SettingValue] = [:]
    /// The locked keys.
    package var locks: [String] = []
    /// Lines that were not taken, and why (a lock on a dir: dconf locks exact keys only).
    package var notes: [String] = []

    /// Reads the keyfiles of `directory` in file-name order (later files win, as in dconf) and
    /// the lock files of `directory/locks`.
    ///
    /// - Throws: `invalidValue` naming the file and line of a keyfile that cannot be read, or a
    ///   value that does not fit its key's schema.
    package init(directory: String, schema: SettingsSchema) throws(SettingsError) {
        for name in try FileSystem.regularFiles(in: directory).names {
            let file = "\(directory)/\(name)"
            do throws(SettingsError) {
                guard let text = String(validating: try FileSystem.read(file, limit: 16 << 20), as: UTF8.self)
                else {
                    throw SettingsError(.invalidValue, "not UTF-8 text")
                }
                defaults.merge(try DconfKeyfile.values(in: text, dir: "/", schema: schema)) { $1 }
            } catch {
                throw SettingsError(.invalidValue, "\(file): \(error.message)", key: error.key, path: file)
            }
        }
        let lockFolder = "\(directory)/locks"
        for name in try FileSystem.regularFiles(in: lockFolder).names {
            let file = "\(lockFolder)/\(name)"
            let text = String(decoding: try FileSystem.read(file, limit: 16 << 20), as: UTF8.self)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let path = line.trimmingWhitespace
                if path.isEmpty || path.hasPrefix("#") { continue }
                if path.hasSuffix("/") {
                    notes.append(
                        "\(file):\(index + 1): \(path) is a dir; dconf locks exact keys only, so it is not taken"
                    )
                    continue
                }
                do throws(SettingsError) {
                    locks.append(try DconfPath.key(forPath: path))
                } catch {
                    throw SettingsError(.invalidValue, "\(file):\(index + 1): \(error.message)", path: file)
                }
            }
        }
        locks = Array(Set(locks)).sorted()
    }
}
