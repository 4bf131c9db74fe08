import Foundation
import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// A client socket that reads only when asked: for watching what a daemon sends a peer that
/// does not read, and for holding idle connections.
final class PlainSocket {
    let fd: Int32

    init(path: String) throws {
        fd = try connectedSocket(path: path)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    /// Sends one frame (a newline is added).
    func send(frame: String) {
        let bytes = Array(frame.utf8) + [0x0A]
        _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything until the daemon closes the connection (or 10 s pass without a byte).
    func readAll() -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            // A signal (another test's child exiting) interrupts the read; it is not the end.
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return result }
            result += buffer[0..<count]
        }
    }

    /// The next `count` lines.
    func readLines(count: Int) -> [[UInt8]] {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pending.filter({ $0 == 0x0A }).count < count {
            let read = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read < 0, errno == EINTR { continue }
            if read <= 0 { break }
            pending += buffer[0..<read]
        }
        return pending.split(separator: 0x0A).prefix(count).map(Array.init)
    }
}

/// A stream socket connected to the Unix socket at `path`.
func connectedSocket(path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix(107)) }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        close(fd)
        throw SettingsErrorForTests.cannotConnect(path)
    }
    return fd
}

/// A socket that listens and never accepts or answers: a peer that is not a settingsd, or a
/// wedged one. Connections complete (the kernel queues them) and then hear nothing.
final class SilentListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: Array(path.utf8.prefix(buffer.count - 1)) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw SettingsError(.io, "cannot listen on '\(path)' (errno \(errno))")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
