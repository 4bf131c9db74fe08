#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a path names: its device and inode. A store records it when it opens its database
/// and checks it before every commit, so a file removed or replaced behind its back (`rm`, an
/// `export` or a restore onto it) stops writes with a clear error instead of acknowledging them
/// into a file nobody will read again.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The file `path` names now, or nil when it names none.
    static func of(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Throws unless `path` still names this file.
    func check(_ path: String) throws(SettingsError) {
        guard let now = Self.of(path) else {
            throw SettingsError(
                .io,
                "the database file '\(path)' was removed while open; writes are refused so that none is acknowledged into a deleted file (restart the store)",
                path: path)
        }
        guard now == self else {
            throw SettingsError(
                .io,
                "the database file '\(path)' was replaced by another file while open; writes are refused so that none is acknowledged into the old one (restart the store)",
                path: path)
        }
    }
}
