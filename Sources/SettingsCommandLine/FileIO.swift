import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Reading and writing whole files (or stdin/stdout as `-`) with errors that name the path.
enum FileIO {
    /// The bytes of `path`, or of stdin for `-`; files over `limit` bytes are refused.
    static func read(_ path: String, limit: Int = 256 << 20) throws(SettingsError) -> [UInt8] {
        try FileSystem.read(path, limit: limit)
    }

    /// Writes `text` to `path` (mode 0600, replaced atomically), or to stdout for `-`.
    static func write(_ text: String, to path: String) throws(SettingsError) {
        guard path != "-" else {
            Output.line(text)
            return
        }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create '\(temporary)'", path) }
        let bytes = Array((text + "\n").utf8)
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

    private static func failure(_ what: String, _ path: String) -> SettingsError {
        SettingsError(.io, "\(what): \(String(cString: strerror(errno)))", path: path)
    }
}
