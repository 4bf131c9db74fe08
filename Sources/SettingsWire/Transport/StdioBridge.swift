import SettingsStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `settingsd bridge`: joins this process's standard input and output to a daemon's socket, so
/// that a replica on another machine, which started this process over SSH, runs a replica
/// session with that daemon as if it had connected to its socket. It writes a `BridgeBanner`
/// first, then copies bytes both ways until either side ends.
package enum StdioBridge {
    /// Connects to the daemon at `socketPath` (checking who listens, `DaemonTrust`), writes the
    /// banner, and relays until standard input or the socket ends.
    ///
    /// - Returns: The exit status: 0 after a relay that ended, 1 when the daemon could not be
    ///   reached (the banner says why).
    package static func run(socketPath: String) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let socket: Int32
        do throws(SettingsError) {
            socket = try DaemonTrust.connect(path: socketPath)
        } catch {
            _ = writeAll(1, Array(BridgeBanner.refused(error).line.utf8))
            return 1
        }
        defer { close(socket) }
        guard writeAll(1, Array(BridgeBanner.ready.line.utf8)) else { return 1 }
        relay(input: 0, output: 1, socket: socket)
        return 0
    }

    /// Copies `input` to `socket` and `socket` to `output` until the socket ends or fails; the
    /// end of `input` is passed on as a half-close, so the daemon still finishes what it sends.
    static func relay(input: Int32, output: Int32, socket: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var inputOpen = true
        while true {
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: inputOpen ? input : -1, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[0].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0, writeAll(output, buffer[..<count]) else { return }
            }
            if inputOpen, fds[1].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                if count <= 0 {
                    inputOpen = false
                    shutdown(socket, Int32(SHUT_WR))
                } else if !writeAll(socket, buffer[..<count]) {
                    return
                }
            }
        }
    }

    /// Writes every byte to a blocking descriptor; false when it fails (the other end went away).
    static func writeAll<Bytes: Collection<UInt8>>(_ fd: Int32, _ bytes: Bytes) -> Bool {
        let array = Array(bytes)
        var written = 0
        while written < array.count {
            let count = array.withUnsafeBytes {
                write(fd, $0.baseAddress.map { $0 + written }, array.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }
}
