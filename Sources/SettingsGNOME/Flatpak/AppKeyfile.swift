import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// A Flatpak app's settings keyfile as a bridge's side: read whole when compared, written whole
/// and atomically (a temporary file renamed over it, as GLib does), so the app's own keyfile
/// backend, which watches the file, sees a complete file and reloads it. The file is hostile
/// input: a symbolic link anywhere between the app's folder and the file, a file that is not a
/// regular one, one over `GLibKeyfile.maximumBytes`, not UTF-8 or not GLib's syntax is refused
/// with the reason, and then nothing is written to it.
final class AppKeyfile: BridgeSide {
    /// The app.
    let app: String
    /// The app's folder (`~/.var/app/APP_ID`): nothing is read or written outside it.
    let folder: String
    /// The keyfile.
    let path: String
    private var document = GLibKeyfile() {
        didSet { values = Self.values(of: document) }
    }
    /// The document's values by path, read once per version of it: a comparison asks for every
    /// key, and the document would walk all its lines for each.
    private var values: [String: String] = [:]

    init(app: String, layout: FlatpakLayout) {
        self.app = app
        folder = layout.appFolder(app)
        path = layout.keyfile(app)
    }

    /// Reads the file again (a missing file is an empty one).
    ///
    /// - Throws: `invalidValue` naming the file and why it is refused.
    func reload() throws(SettingsError) {
        guard let text = try Self.read(path, inside: folder) else {
            document = GLibKeyfile()
            return
        }
        do throws(SettingsError) {
            document = try GLibKeyfile(text: text)
        } catch {
            throw SettingsError(.invalidValue, "'\(path)' is refused: \(error.message)", path: path)
        }
    }

    /// The values of `document` by their paths (`/group/key`).
    private static func values(of document: GLibKeyfile) -> [String: String] {
        var values: [String: String] = [:]
        for entry in document.entries {
            // GLib's keyfile backend ignores groups that make no path and keys holding a slash.
            guard !entry.group.hasPrefix("/"), !entry.group.hasSuffix("/"), !entry.group.contains("//"),
                !entry.key.contains("/"), !entry.key.contains("["), !entry.key.isEmpty
            else { continue }
            values["/" + entry.group + "/" + entry.key] = entry.value
        }
        return values
    }

    func userKeys(under dir: String) -> [String] {
        values.keys.filter { $0.hasPrefix(dir) }
    }

    func userValue(at path: String, type: GVariantType?) throws(SettingsError) -> GVariant? {
        guard let text = values[path] else { return nil }
        do throws(SettingsError) {
            return try GVariant(parsing: text, type: type)
        } catch {
            // As GLib: a string may be written without its quotes.
            if type == .string, !text.hasPrefix("\"") { return .string(text) }
            throw SettingsError(.invalidValue, "\(app): \(path) = \(text.prefix(80)): \(error.message)")
        }
    }

    func isWritable(_ path: String) -> Bool {
        Self.split(path) != nil
    }

    func change(_ changes: [(path: String, value: GVariant?)]) throws(SettingsError) -> String? {
        var changed = document
        for change in changes {
            guard let (group, key) = Self.split(change.path) else { continue }
            if let value = change.value {
                changed.set(value.text(annotated: false), group: group, key: key)
            } else {
                changed.remove(group: group, key: key)
            }
        }
        try Self.write(changed.text, to: path, inside: folder)
        document = changed
        return nil
    }

    func lastModified(notAfter now: UInt64) -> UInt64? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        let modified =
            UInt64(max(status.st_mtim.tv_sec, 0)) * 1000 + UInt64(status.st_mtim.tv_nsec / 1_000_000)
        return min(modified, now)
    }

    /// `/org/gnome/TextEditor/style-scheme` as the group `org/gnome/TextEditor` and the key.
    static func split(_ path: String) -> (group: String, key: String)? {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            return nil
        }
        let group = String(path[path.index(after: path.startIndex)..<slash])
        let key = String(path[path.index(after: slash)...])
        guard !key.isEmpty, !group.isEmpty else { return nil }
        return (group, key)
    }

    // MARK: Files

    /// The text of `path`, or nil when it does not exist.
    static func read(_ path: String, inside folder: String) throws(SettingsError) -> String? {
        try checkNoLinks(from: folder, to: path, creating: false)
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw refused(path, "it cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw refused(path, "it is not a regular file")
        }
        guard status.st_size <= GLibKeyfile.maximumBytes else {
            throw refused(
                path,
                "it is \(status.st_size) bytes, over the \(GLibKeyfile.maximumBytes) a settings keyfile may be"
            )
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { Glibc.read(descriptor, $0 + offset, buffer.count - offset) } ?? 0
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            offset += count
        }
        guard let text = String(validating: bytes.prefix(offset), as: UTF8.self), !text.contains("\u{0}")
        else {
            throw refused(path, "it is not UTF-8 text")
        }
        return text
    }

    /// Writes `text` to `path` through a temporary file in its folder renamed over it (0600, as
    /// GLib writes it), creating the folders under `folder` it needs.
    static func write(_ text: String, to path: String, inside folder: String) throws(SettingsError) {
        try checkNoLinks(from: folder, to: path, creating: true)
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        let temporary = directory + "/.keyfile.settingsd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw unwritable(path, String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        var offset = 0
        var failed = false
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Glibc.write(descriptor, $0 + offset, buffer.count - offset) } ?? 0
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                failed = true
                break
            }
            offset += count
        }
        if fsync(descriptor) != 0 { failed = true }
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw unwritable(path, reason)
        }
    }

    /// Makes the folders on the way from `folder` (which must exist) to `path`, refusing links.
    static func makeFolders(to path: String, inside folder: String) throws(SettingsError) {
        try checkNoLinks(from: folder, to: path, creating: true)
    }

    /// Refuses a symbolic link (or anything but a folder) on the way from `folder` to `path`'s
    /// folder, and `path` itself as a link; with `creating`, makes the missing folders (0700).
    private static func checkNoLinks(from folder: String, to path: String, creating: Bool)
        throws(SettingsError)
    {
        guard path.hasPrefix(folder + "/") else {
            throw refused(path, "it is outside the app's folder \(folder)")
        }
        var status = stat()
        var current = folder
        guard lstat(folder, &status) == 0 else {
            if !creating { return }
            throw refused(path, "the app's folder \(folder) does not exist (the app has never run)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw refused(path, "\(folder) is not a folder") }
        let parts = path.dropFirst(folder.count + 1).split(separator: "/")
        for (index, part) in parts.enumerated() {
            current += "/" + part
            let isFile = index == parts.count - 1
            if lstat(current, &status) != 0 {
                guard errno == ENOENT else {
                    throw refused(path, "\(current): \(String(cString: strerror(errno)))")
                }
                if isFile { return }
                guard creating else { return }
                guard mkdir(current, 0o700) == 0 || errno == EEXIST else {
                    throw refused(path, "\(current) cannot be made: \(String(cString: strerror(errno)))")
                }
                continue
            }
            if status.st_mode & S_IFMT == S_IFLNK {
                throw refused(path, "\(current) is a symbolic link: nothing is read or written through one")
            }
            if !isFile, status.st_mode & S_IFMT != S_IFDIR {
                throw refused(path, "\(current) is not a folder")
            }
        }
    }

    private static func refused(_ path: String, _ reason: String) -> SettingsError {
        SettingsError(.invalidValue, "'\(path)' is refused: \(reason)", path: path)
    }

    private static func unwritable(_ path: String, _ reason: String) -> SettingsError {
        SettingsError(.io, "'\(path)' cannot be written: \(reason)", path: path)
    }
}
