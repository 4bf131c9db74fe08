#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive claim on a database file, held by one live store at a time.
///
/// It is an `flock` on `<database>.lock`, which also holds the holder's pid for error messages.
/// `flock` belongs to the open file, so a second store in the same process is refused too, and
/// the kernel releases it when the holder exits or crashes.
final class OwnerLock {
    private let fd: Int32
    let path: String

    package init(database: String) throws(SettingsError) {
        path = database + ".lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileSystem.error("cannot create lock file '\(path)'", path: path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure =
                errno == EWOULDBLOCK
                ? Self.inUseError(database: database, fd: fd)
                : FileSystem.error("cannot lock '\(path)'", path: path)
            close(fd)
            throw failure
        }
        // The pid is only informative, for the message another opener gets: a failed write is harmless.
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    private static func inUseError(database: String, fd: Int32) -> SettingsError {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        let pid = Int32(text.split(separator: "\n").first ?? "")
        let holder =
            switch pid {
            case getpid(): "this process (pid \(getpid())) through another store object"
            case let pid?: "process \(pid)"
            case nil: "another process"
            }
        return SettingsError(.databaseInUse, "'\(database)' is already open in \(holder)", path: database)
    }
}
