import Foundation
import Synchronization

@testable import SettingsStore
@testable import SettingsWire

/// A Unix socket between clients and a daemon that passes every byte on and keeps the request
/// frames clients send, to count what a command costs in round trips.
final class LoggingProxy: Sendable {
    let socket: String
    private let listener: Int32
    private let frames = Frames()

    /// The frames kept, shared with the threads that read them.
    private final class Frames: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// Listens on a fresh path and forwards each connection to `daemonSocket`.
    init(to daemonSocket: String) throws {
        socket = "/tmp/sdp-\(UUID().uuidString.prefix(12)).sock"
        listener = try UnixSocket.listen(path: socket)
        let listener = self.listener
        Self.block(listener)
        Thread.detachNewThread { [frames] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                guard let daemon = try? UnixSocket.connect(path: daemonSocket) else {
                    close(client)
                    continue
                }
                Self.block(client)
                Self.block(daemon)
                Thread.detachNewThread { Self.pump(from: client, to: daemon, keeping: frames) }
                Thread.detachNewThread { Self.pump(from: daemon, to: client, keeping: nil) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(socket)
    }

    /// The request frames clients sent so far, as text.
    var requests: [String] { frames.lines.withLock { $0 } }

    /// Makes `fd`'s calls wait: the proxy's threads each wait on one socket.
    private static func block(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    }

    private static func pump(from source: Int32, to target: Int32, keeping frames: Frames?) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var partial: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            if let frames {
                partial += buffer[..<count]
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: partial[..<newline], as: UTF8.self)
                    frames.lines.withLock { $0.append(line) }
                    partial.removeSubrange(...newline)
                }
            }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes {
                    send(target, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { break }
                sent += written
            }
        }
        shutdown(target, Int32(SHUT_WR))
        close(source)
    }
}
