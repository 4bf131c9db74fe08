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

@Suite("A replica connection's frames are parsed and applied off its socket's queue, within a bound")
struct SessionQueuesTests {
    @Test("the backlog pauses reading at its frame or byte limit and resumes once half is handled")
    func backlogBounds() {
        let backlog = FrameBacklog(frameLimit: 4, byteLimit: 1_000)
        #expect(!backlog.admit(bytes: 10))
        #expect(!backlog.admit(bytes: 10))
        #expect(!backlog.admit(bytes: 10))
        #expect(backlog.admit(bytes: 10))  // the fourth frame reaches the limit
        #expect(!backlog.allowsReading)
        #expect(!backlog.admit(bytes: 10))  // already paused: said once
        #expect(!backlog.release(bytes: 10))
        #expect(!backlog.release(bytes: 10))
        #expect(!backlog.release(bytes: 10))  // two still wait: not below half
        #expect(backlog.release(bytes: 10))
        #expect(backlog.allowsReading)
        // One large frame is taken whole, and pauses reading until it is handled (one small
        // frame still waits, below half the limits).
        #expect(backlog.admit(bytes: 5_000))
        #expect(!backlog.allowsReading)
        #expect(backlog.release(bytes: 5_000))
        #expect(backlog.allowsReading)
    }

    @Test("frames are handled in the order read, on the session's queue, and a pause ends when they are")
    func orderAndResume() {
        let resumed = Mutex(0)
        let queues = SessionQueues(label: "test") { _ in resumed.withLock { $0 += 1 } }
        let gate = DispatchSemaphore(value: 0)
        let handled = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let count = 4 * SyncSession.window + 3
        var pausedAt: Int?
        for index in 0..<count {
            let paused = queues.submit(bytes: 100) {
                { @Sendable in
                    if index == 0 { gate.wait() }  // the session is busy: frames pile up
                    handled.withLock { $0.append(index) }
                    if index == count - 1 { done.signal() }
                }
            }
            if paused, pausedAt == nil { pausedAt = index }
        }
        #expect(pausedAt == 4 * SyncSession.window - 1)
        #expect(!queues.allowsReading)
        #expect(resumed.withLock { $0 } == 0)
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(handled.withLock { $0 } == Array(0..<count))
        #expect(resumed.withLock { $0 } == 1)
        #expect(queues.allowsReading)
    }

    @Test("a paused connection delivers nothing new until resumed, and closes cleanly while paused")
    func pausedConnection() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let peer = pair[1]
        defer { close(peer) }
        let connection = SocketConnection(
            fd: pair[0], label: "test", maximumFrameBytes: 1 << 20, outboundLimit: 1 << 20)
        let frames = Mutex<[String]>([])
        let arrived = DispatchSemaphore(value: 0)
        connection.onFrame = { frame in
            frames.withLock { $0.append(String(decoding: frame, as: UTF8.self)) }
            arrived.signal()
        }
        connection.start()
        func send(_ text: String) { _ = (text + "\n").withCString { write(peer, $0, strlen($0)) } }
        send("one")
        #expect(arrived.wait(timeout: .now() + 5) == .success)
        connection.queue.sync { connection.pauseReading() }
        send("two")
        // Reading is paused: the frame stays in the socket (a second pause is harmless).
        #expect(arrived.wait(timeout: .now() + 0.3) == .timedOut)
        connection.queue.sync {
            connection.pauseReading()
            connection.resumeReading()
        }
        #expect(arrived.wait(timeout: .now() + 5) == .success)
        #expect(frames.withLock { $0 } == ["one", "two"])
        // Closing while paused resumes the source before cancelling it, as Dispatch requires.
        let closed = DispatchSemaphore(value: 0)
        connection.onClose = { _ in closed.signal() }
        connection.queue.sync {
            connection.pauseReading()
            connection.close()
            connection.resumeReading()  // after close: nothing to resume
        }
        #expect(closed.wait(timeout: .now() + 5) == .success)
    }
}
