import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Reading and writing whole files (or stdin/stdout as `-`) with errors that name the path.
enum FileIO {
    /// The bytes of `path`, or of stdin for `-`; files over `limit` bytes are refused.
    static func read(_ path: String, limit: Int = 256 << 20) throws(SettingsError) -> [UInt8] {
        try FileSystem.read(path, limit: limit)
    }

    /// Writes `text` to `path` (mode 0600, replaced atomically), or to stdout for `-`. A symlink
    /// is written through (the link stays, its target is replaced); a SQLite database, or the
    /// WAL, shared-memory or journal file of one, is refused: it may be a live store.
    /// Whether `path` is a folder.
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The regular files of the folder `path`, by name, or nil when it cannot be listed.
    static func names(in path: String) -> [String]? {
        try? FileSystem.regularFiles(in: path).names
    }

    /// Creates the folder `path` (mode 0755) and its parents unless they exist.
    static func makeDirectory(_ path: String) throws(SettingsError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw failure("cannot create the folder '\(prefix)'", prefix)
            }
        }
    }

    static func write(_ text: String, to given: String, endingLine: Bool = true, mode: mode_t = 0o600)
        throws(SettingsError)
    {
        let text = endingLine ? text + "\n" : text
        guard given != "-" else {
            Output.text(text)
            return
        }
        let path = resolvingSymlink(given)
        guard !DatabaseHeader.isDatabaseOrPart(path) else {
            throw SettingsError(
                .invalidValue,
                "'\(given)' is a SQLite database (or part of one), perhaps a live settings store: not writing over it; choose another file",
                path: given)
        }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("cannot create '\(temporary)'", path) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return Glibc.write(fd, rest.baseAddress, rest.count)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                close(fd)
                unlink(temporary)
                throw failure("cannot write '\(path)'", path)
            }
            offset += written
        }
        guard fsync(fd) == 0, close(fd) == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot write '\(path)'", path)
        }
    }

    /// The file a symlink at `path` points to (its target, made absolute), or `path` itself.
    private static func resolvingSymlink(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func failure(_ what: String, _ path: String) -> SettingsError {
        SettingsError(.io, "\(what): \(String(cString: strerror(errno)))", path: path)
    }
}
