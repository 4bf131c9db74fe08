import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("The daemon's event loop")
struct PollLoopTests {
    let directory = TemporaryDirectory()

    /// Runs `loop` on its own thread until the end of `body`.
    private func running<T>(_ loop: PollLoop, _ body: () throws -> T) throws -> T {
        let stopped = DispatchSemaphore(value: 0)
        try loop.runOnNewThread { stopped.signal() }
        defer {
            loop.stop()
            stopped.wait()
        }
        return try body()
    }

    @Test("a ready descriptor reaches its handler; one without interest is not watched until it has one")
    func readinessAndInterest() throws {
        let loop = try PollLoop()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let ends = pair
        defer { ends.forEach { close($0) } }
        let heard = Mutex<[Int16]>([])
        let woke = DispatchSemaphore(value: 0)
        try running(loop) {
            loop.execute {
                loop.register(ends[0], interest: []) { events in
                    heard.withLock { $0.append(events) }
                    var byte: UInt8 = 0
                    _ = read(ends[0], &byte, 1)
                    woke.signal()
                }
            }
            _ = write(ends[1], "x", 1)
            #expect(woke.wait(timeout: .now() + 0.3) == .timedOut)  // no interest: not watched
            loop.execute { loop.setInterest(.read, for: ends[0]) }
            #expect(woke.wait(timeout: .now() + 5) == .success)
        }
        #expect(heard.withLock { $0 }.first.map { $0 & Int16(POLLIN) != 0 } == true)
    }

    @Test("a descriptor epoll refuses to watch is reported to its handler as not valid")
    func refusedDescriptor() throws {
        let loop = try PollLoop()
        // epoll refuses regular files (EPERM): the stand-in for a kernel out of watches.
        let file = open(directory.file("plain"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(file >= 0)
        defer { close(file) }
        let heard = Mutex<Int16>(0)
        let told = DispatchSemaphore(value: 0)
        try running(loop) {
            loop.execute {
                loop.register(file, interest: .read) { events in
                    heard.withLock { $0 = events }
                    loop.unregister(file)
                    told.signal()
                }
            }
            #expect(told.wait(timeout: .now() + 5) == .success)
        }
        #expect(heard.withLock { $0 } & Int16(POLLNVAL) != 0)
    }
}
