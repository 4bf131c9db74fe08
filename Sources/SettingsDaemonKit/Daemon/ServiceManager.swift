import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Tells systemd (`Type=notify`) what the daemon is doing, over the datagram socket named by
/// `$NOTIFY_SOCKET`: `READY=1` once clients can connect, `RELOADING=1` around a policy reload,
/// `STOPPING=1` on the way out. Without `$NOTIFY_SOCKET` (not started by systemd) it does nothing.
package struct ServiceManager: Sendable {
    /// The socket's path (`@` first: an abstract socket), or nil when there is none.
    private let path: String?

    /// The service manager `$NOTIFY_SOCKET` names, if any.
    package init() {
        path = getenv("NOTIFY_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sends `state` (`KEY=value` lines); failures are ignored, as systemd's own client does.
    package func notify(_ state: String) {
        guard let path else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // An abstract socket's name starts with a NUL where the path says `@`.
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { target in
            for (index, byte) in bytes.enumerated() { target[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1))
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { body in
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
    }
}
