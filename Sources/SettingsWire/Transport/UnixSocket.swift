package import SettingsStore

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The credentials of the process at the other end of a Unix socket.
package struct PeerCredentials: Sendable, Equatable {
    /// The peer's process id.
    package let pid: Int32
    /// The peer's user id.
    package let uid: UInt32
    /// The peer's group id.
    package let gid: UInt32
}

/// Thin, checked wrappers over the Unix-domain socket calls (Glibc), with errors naming the path.
package enum UnixSocket {
    /// The longest socket path `sockaddr_un` holds.
    static let maximumPathBytes = 107

    /// A listening socket bound to `path` with `mode` (0600: this user only), non-blocking.
    package static func listen(path: String, mode: mode_t = 0o600, backlog: Int32 = 512) throws(SettingsError)
        -> Int32
    {
        let fd = try makeSocket(path: path)
        do throws(SettingsError) {
            try withAddress(path) { (address, length) throws(SettingsError) in
                guard bind(fd, address, length) == 0 else {
                    throw FileSystem.error("cannot bind '\(path)'", path: path)
                }
            }
            guard chmod(path, mode) == 0 else {
                throw FileSystem.error("cannot chmod '\(path)'", path: path)
            }
            guard Glibc.listen(fd, backlog) == 0 else {
                throw FileSystem.error("cannot listen on '\(path)'", path: path)
            }
            setNonBlocking(fd)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// A connected, blocking socket, or `daemonNotRunning` when nothing listens at `path`.
    package static func connect(path: String) throws(SettingsError) -> Int32 {
        let fd = try makeSocket(path: path)
        do throws(SettingsError) {
            try withAddress(path) { (address, length) throws(SettingsError) in
                guard Glibc.connect(fd, address, length) == 0 else {
                    switch errno {
                    case ENOENT, ECONNREFUSED:
                        throw SettingsError(
                            .daemonNotRunning, "no settingsd daemon is listening on '\(path)'", path: path)
                    case EACCES, EPERM:
                        throw SettingsError(.accessDenied, "not allowed to connect to '\(path)'", path: path)
                    default:
                        throw FileSystem.error("cannot connect to '\(path)'", path: path)
                    }
                }
            }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// The next pending connection, non-blocking and close-on-exec; nil when none is pending or
    /// accepting failed (`errno` says why: `EMFILE` and `ENFILE` when out of descriptors).
    package static func accept(_ listener: Int32) -> Int32? {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        setNonBlocking(fd)
        return fd
    }

    /// The peer's pid, uid and gid (`SO_PEERCRED`).
    package static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var credentials = LinuxCredentials()
        var length = socklen_t(MemoryLayout<LinuxCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Throws unless `path` fits a Unix socket address.
    package static func checkPath(_ path: String) throws(SettingsError) {
        guard path.utf8.count <= maximumPathBytes else {
            throw SettingsError(
                .io,
                "socket path '\(path)' is \(path.utf8.count) bytes, longer than the \(maximumPathBytes) a Unix socket allows",
                path: path)
        }
    }

    private static func makeSocket(path: String) throws(SettingsError) -> Int32 {
        try checkPath(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FileSystem.error("cannot create a socket for '\(path)'", path: path) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    private static func withAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SettingsError) -> Void
    ) throws(SettingsError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8.prefix(maximumPathBytes))
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result: Result<Void, SettingsError> = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                do throws(SettingsError) {
                    try body(address, length)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
        }
        try result.get()
    }
}

/// Layout-compatible with Linux's `struct ucred`, which Swift does not import.
private struct LinuxCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
