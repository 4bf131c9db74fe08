import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// A Redis server from Debian on a scratch Unix socket, and a minimal RESP client: the peer for
/// round trips and for a CLI read as a whole process.
final class RedisPeer {
    let socket: String
    private let process = Process()

    /// Starts `redis-server` if installed, or returns nil: in memory, or with `appendOnly` an
    /// append-only file in its own scratch folder written every second (`appendfsync everysec`).
    init?(scratch: Scratch, name: String, appendOnly: Bool = false) {
        guard let server = ChildProcess.which("redis-server") else { return nil }
        let folder = scratch.file(name)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        socket = folder + "/redis.sock"
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments =
            ["--port", "0", "--unixsocket", socket, "--dir", folder, "--save", ""]
            + (appendOnly ? ["--appendonly", "yes", "--appendfsync", "everysec"] : ["--appendonly", "no"])
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        for _ in 0..<200 where access(socket, F_OK) != 0 { usleep(10_000) }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }

    /// A blocking connection speaking RESP.
    final class Connection {
        private let fd: Int32
        private var buffer: [UInt8] = []
        /// Bytes at the front of `buffer` already read.
        private var consumed = 0
        private var chunk = [UInt8](repeating: 0, count: 65_536)

        init(path: String) throws {
            fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix(107)) }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard result == 0 else { throw CocoaError(.fileNoSuchFile) }
        }

        deinit { close(fd) }

        static func command(_ parts: [String]) -> [UInt8] {
            Array(("*\(parts.count)\r\n" + parts.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()).utf8)
        }

        /// Sends `count` copies of a command at once and reads all the replies.
        func send(_ command: [UInt8], times count: Int = 1) {
            let bytes = Array([[UInt8]](repeating: command, count: count).joined())
            _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            for _ in 0..<count { readReply() }
        }

        /// Reads one reply: a status, error or integer line, or a bulk string (`$LENGTH`, bytes).
        private func readReply() {
            guard let line = readLine(), buffer[line.lowerBound] == UInt8(ascii: "$") else { return }
            var length = 0
            for byte in buffer[(line.lowerBound + 1)..<line.upperBound] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return }  // -1: nil
                length = length * 10 + Int(byte - UInt8(ascii: "0"))
            }
            while buffer.count - consumed < length + 2, receive() {}
            consumed = min(buffer.count, consumed + length + 2)
        }

        /// The next line's bytes without `\r\n`, as a range of `buffer`, or nil at end of stream.
        private func readLine() -> Range<Int>? {
            while true {
                if let end = buffer[consumed...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = consumed..<max(consumed, end - 1)
                    consumed = end + 1
                    return line
                }
                guard receive() else { return nil }
            }
        }

        /// Appends what the socket has, dropping the bytes already read first.
        private func receive() -> Bool {
            if consumed > 0 {
                buffer.removeFirst(consumed)
                consumed = 0
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            buffer += chunk[0..<count]
            return true
        }
    }
}
