import Foundation
import Synchronization

/// A raw client socket for feeding a daemon arbitrary bytes, with a thread that drains (and
/// counts) whatever the daemon answers, so the daemon never sees a reader that stopped.
final class RawSocket: Sendable {
    let fd: Int32
    private let received = Atomic<Int>(0)
    private let closedByPeer = Atomic<Bool>(false)

    init(path: String) throws {
        fd = try connectedSocket(path: path)
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                received.add(count, ordering: .relaxed)
            }
            closedByPeer.store(true, ordering: .releasing)
        }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// Sends all of `bytes`; false once the daemon has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return Foundation.send(fd, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    var isClosedByPeer: Bool { closedByPeer.load(ordering: .acquiring) }
    var bytesReceived: Int { received.load(ordering: .relaxed) }
}

enum SettingsErrorForTests: Error {
    case cannotConnect(String)
}

/// A small, seedable PRNG (SplitMix64), so a failing fuzz or chaos run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed for this run: `SETTINGSD_SEED` if set, else random.
    static var seed: UInt64 {
        if let text = ProcessInfo.processInfo.environment["SETTINGSD_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 0...UInt64.max)
    }
}

/// How large the reliability suites run: bounded on CI, `SETTINGSD_FULL=1` for the full size.
enum SuiteScale {
    static var isFull: Bool { ProcessInfo.processInfo.environment["SETTINGSD_FULL"] == "1" }

    static func pick(ci: Int, full: Int) -> Int { isFull ? full : ci }
}
