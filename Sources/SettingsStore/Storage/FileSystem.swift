#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file-system operations the store needs, with errors that name the path.
enum FileSystem {
    /// Creates `path` and its missing parents with `mode` (existing folders are left as they are).
    static func createDirectories(_ path: String, mode: mode_t = 0o700) throws(SettingsError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw error("cannot create folder '\(prefix)'", path: prefix)
            }
        }
    }

    /// Creates an empty file with `mode` if nothing is at `path` yet.
    static func createFileIfMissing(_ path: String, mode: mode_t = 0o600) throws(SettingsError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode)
        guard fd >= 0 else { throw error("cannot create '\(path)'", path: path) }
        close(fd)
    }

    /// The folder part of `path` (`.` when there is none).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A `SettingsError` for the current `errno`.
    static func error(_ what: String, path: String) -> SettingsError {
        let code = errno
        let reason = String(cString: strerror(code))
        let kind: SettingsError.Code =
            switch code {
            case EACCES, EPERM, EROFS: .readOnly
            case ENOSPC, EDQUOT: .diskFull
            default: .io
            }
        return SettingsError(kind, "\(what): \(reason)", path: path)
    }
}
