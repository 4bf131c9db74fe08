#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the first 100 bytes of a file say about it, read without SQLite, so a file that is not a
/// settings store is refused before anything (a lock file, WAL mode, a migration) touches it.
package enum DatabaseHeader {
    /// The file is missing or empty: a new store may be made there.
    case absent
    /// A SQLite database that is a settings store, or blank (no schema, no application id).
    case settingsStore
    /// Anything else, with the reason to report.
    case foreign(String)

    /// Reads the header of the file at `path`.
    static func read(_ path: String, applicationID: Int64) throws(SettingsError) -> DatabaseHeader {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return .absent }
            throw FileSystem.error("cannot open '\(path)'", path: path)
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 100)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 100, 0) }
        guard count >= 0 else { throw FileSystem.error("cannot read '\(path)'", path: path) }
        if count == 0 { return .absent }
        guard count == 100, bytes.starts(with: Array("SQLite format 3\0".utf8)) else {
            return .foreign("'\(path)' is not a SQLite database, so not a settings store")
        }
        let application = Int64(bigEndian32(bytes, at: 68))
        let schemaCookie = bigEndian32(bytes, at: 40)
        let userVersion = bigEndian32(bytes, at: 60)
        if application == applicationID || (application == 0 && schemaCookie == 0 && userVersion == 0) {
            return .settingsStore
        }
        return .foreign("'\(path)' is a SQLite database of another application, not a settings store")
    }

    private static func bigEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension DatabaseHeader {
    /// Whether `path` is a SQLite database (a settings store or not), or the WAL, shared-memory or
    /// journal file of one: no tool of ours may write anything else over it.
    package static func isDatabaseOrPart(_ path: String) -> Bool {
        var database = path
        for suffix in ["-wal", "-shm", "-journal"] where path.hasSuffix(suffix) {
            database = String(path.dropLast(suffix.count))
        }
        let fd = open(database, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
        return count == 16 && bytes.elementsEqual(Array("SQLite format 3\0".utf8))
    }
}
