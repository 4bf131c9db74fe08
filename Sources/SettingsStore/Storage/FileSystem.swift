#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file-system operations the store needs, with errors that name the path.
package enum FileSystem {
    /// Creates `path` and its missing parents with `mode` (existing folders are left as they are).
    package static func createDirectories(_ path: String, mode: UInt32 = 0o700) throws(SettingsError) {
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

    /// The bytes of the file at `path` (`-`: standard input), at most `limit` of them.
    package static func read(_ path: String, limit: Int = 256 << 20) throws(SettingsError) -> [UInt8] {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("cannot open '\(path)'", path: path) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw error("cannot read '\(path)'", path: path)
            }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else {
                throw SettingsError(.invalidValue, "'\(path)' is larger than \(limit) bytes", path: path)
            }
        }
    }

    /// Writes `bytes` to `path` with `mode`: to a hidden temporary name beside it first, synced
    /// to disk when `durable`, then renamed into place, so a reader (or a syncer) only ever sees
    /// the file whole.
    package static func writeAtomically(
        _ bytes: [UInt8], to path: String, mode: UInt32 = 0o600, durable: Bool = true
    ) throws(SettingsError) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let suffix = String(UInt32.random(in: .min ... .max), radix: 16)
        let temporary = parent(of: path) + "/.tmp-\(suffix)-" + name
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw error("cannot write '\(temporary)'", path: temporary) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let failure = error("cannot write '\(temporary)'", path: temporary)
                close(fd)
                unlink(temporary)
                throw failure
            }
            written += count
        }
        let synced = !durable || fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            let failure = error("cannot write '\(path)'", path: path)
            unlink(temporary)
            throw failure
        }
    }

    /// The names in the folder at `path` that end with `suffix` (all when empty), sorted by
    /// their bytes; nothing when the folder does not exist.
    package static func files(in path: String, endingWith suffix: String = "") throws(SettingsError)
        -> [String]
    {
        guard let folder = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw error("cannot list '\(path)'", path: path)
        }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { buffer in
                String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix("."), name.hasSuffix(suffix) else { continue }
            names.append(name)
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The regular files (symlinks followed) in the folder at `path` whose names end with
    /// `suffix`, and the other entries so named that were skipped (FIFOs, sockets, devices,
    /// folders): reading a FIFO would block until someone writes to it.
    package static func regularFiles(in path: String, endingWith suffix: String = "") throws(SettingsError)
        -> (names: [String], skipped: [String])
    {
        var names: [String] = []
        var skipped: [String] = []
        for name in try files(in: path, endingWith: suffix) {
            var info = stat()
            let file = "\(path)/\(name)"
            if stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, !isKernelFile(file) {
                names.append(name)
            } else {
                skipped.append(file)
            }
        }
        return (names, skipped)
    }

    /// Whether `path` resolves into `/proc`, `/sys` or `/dev`, whose "regular files" are the
    /// kernel's (a link in `locks.d` to `/proc/self/environ` would read the daemon's environment).
    static func isKernelFile(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return true }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return ["/proc", "/sys", "/dev"].contains { real == $0 || real.hasPrefix($0 + "/") }
    }

    /// The folder part of `path` (`.` when there is none).
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A `SettingsError` for the current `errno`.
    package static func error(_ what: String, path: String) -> SettingsError {
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
