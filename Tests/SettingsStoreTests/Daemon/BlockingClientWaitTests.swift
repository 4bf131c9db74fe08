import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// How `BlockingClient` waits for answers: for its time-out and no longer, until the daemon closes,
/// and whatever pieces the answers arrive in. Each test scripts the daemon's side of one connection.
@Suite("A blocking client's waits")
struct BlockingClientWaitTests {
    let directory = TemporaryDirectory()

    /// What the scripted daemon does once it has read the first request line.
    enum Script {
        /// Says nothing, and keeps the connection open for `seconds`.
        case silent(seconds: Double)
        /// Closes the connection.
        case close
        /// Writes `bytes`, in pieces of `piece` bytes, `pause` seconds apart.
        case answer(bytes: [UInt8], piece: Int, pause: Double)
    }

    /// Listens on a socket of its own, accepts one connection on a thread, reads a request line,
    /// then plays `script`.
    private func scriptedDaemon(_ script: Script) throws -> (socket: String, done: DispatchSemaphore) {
        let path = directory.file("scripted.sock")
        unlink(path)
        let listener = try UnixSocket.listen(path: path)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer {
                close(listener)
                done.signal()
            }
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 10_000) == 1 else { return }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") {}
            switch script {
            case .silent(let seconds):
                Thread.sleep(forTimeInterval: seconds)
            case .close:
                return
            case .answer(let bytes, let piece, let pause):
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + piece)
                    let sent = bytes[offset..<end].withUnsafeBytes {
                        send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    guard sent > 0 else { return }
                    offset += sent
                    if offset < bytes.count { Thread.sleep(forTimeInterval: pause) }
                }
                // Stay until the client has read it all and hung up.
                while recv(connection, &byte, 1, 0) > 0 {}
            }
        }
        return (path, done)
    }

    @Test("a daemon that never answers fails the request with a time-out after the client's, not before")
    func silenceTimesOut() throws {
        let daemon = try scriptedDaemon(.silent(seconds: 1))
        let client = try BlockingClient(socketPath: daemon.socket, timeout: 0.3)
        let started = Date()
        #expect {
            try client.request(.get(key: "k"))
        } throws: { error in
            (error as? SettingsError)?.code == .timeout
                && (error as? SettingsError)?.message.contains(daemon.socket) == true
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.29 && waited < 2.5, "waited \(waited) s for a 0.3 s time-out")
        daemon.done.wait()
    }

    @Test("a daemon that closes while the client waits fails the request at once with connectionLost")
    func closeEndsTheWait() throws {
        let daemon = try scriptedDaemon(.close)
        let client = try BlockingClient(socketPath: daemon.socket, timeout: 20)
        let started = Date()
        #expect {
            try client.request(.get(key: "k"))
        } throws: { error in
            (error as? SettingsError)?.code == .connectionLost
        }
        #expect(Date().timeIntervalSince(started) < 5)
        daemon.done.wait()
    }

    @Test(
        "answers in any pieces, larger than the read buffer or split mid-frame, arrive whole; another id's is skipped",
        arguments: [(piece: 1 << 20, pause: 0.0), (piece: 7, pause: 0.0), (piece: 40_000, pause: 0.02)])
    func piecesArriveWhole(piece: Int, pause: Double) throws {
        // Two answers: one for an id the client does not wait for, which it skips, then a value
        // of 300 KiB (several read buffers' worth).
        let large = String(repeating: "x", count: 300 << 10)
        let skipped = #"{"id":5,"ok":true}"# + "\n"
        let awaited = #"{"id":1,"ok":true,"value":""# + large + #"","type":"string"}"# + "\n"
        let bytes = Array((skipped + awaited).utf8)
        let daemon = try scriptedDaemon(.answer(bytes: bytes, piece: piece, pause: pause))
        do {
            let client = try BlockingClient(socketPath: daemon.socket, timeout: 20)
            let fields = try client.request(.get(key: "k"))
            #expect(fields["value"] == .string(large))
        }
        daemon.done.wait()
    }

    @Test("a daemon that trickles its answer a byte at a time cannot stretch the time-out")
    func trickleCannotStretchTheTimeOut() throws {
        let frame = Array(#"{"id":1,"ok":true,"value":"a value that takes a while"}"#.utf8) + [0x0A]
        let daemon = try scriptedDaemon(.answer(bytes: frame, piece: 1, pause: 0.05))
        let client = try BlockingClient(socketPath: daemon.socket, timeout: 0.5)
        let started = Date()
        #expect(throws: SettingsError.self) { try client.request(.get(key: "k")) }
        let waited = Date().timeIntervalSince(started)
        #expect(waited < 1.5, "waited \(waited) s for a 0.5 s time-out")
    }

    @Test(
        "hostile answers (garbage, deep nesting, endless lines, forged ids) fail the call, never crash or hang it"
    )
    func hostileAnswers() async throws {
        let seed = SeededGenerator.seed
        var generator = SeededGenerator(seed: seed)
        let depth = 200_000
        let fixed: [[UInt8]] = [
            Array(repeating: UInt8(ascii: "["), count: depth)
                + Array(repeating: UInt8(ascii: "]"), count: depth)
                + [0x0A],
            Array(#"{"id":1,"ok":true,"value":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: depth) + [
                0x0A
            ],
            Array(#"{"id":7,"ok":true}"#.utf8) + [0x0A],
            Array(#"{"ok":false,"error":{"code":"nonsense","message":"x"}}"#.utf8) + [0x0A],
            Array(#"{"id":1,"ok":true,"value":1e999999}"#.utf8) + [0x0A],
            [0xFF, 0xFE, 0x0A],
            Array(repeating: UInt8(ascii: "x"), count: (64 << 20) + 10),
        ]
        var scripts = fixed
        for _ in 0..<SuiteScale.pick(ci: 20, full: 200) {
            let count = Int.random(in: 1...4096, using: &generator)
            scripts.append((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } + [0x0A])
        }
        for (index, bytes) in scripts.enumerated() {
            let daemon = try scriptedDaemon(.answer(bytes: bytes, piece: 1 << 20, pause: 0))
            let started = Date()
            do {
                // Released at the end of this block: the scripted daemon then sees the hang-up.
                let client = try BlockingClient(socketPath: daemon.socket, timeout: 2)
                _ = try client.request(.get(key: "k"))
            } catch {
                // Failing is right; how it fails must be a SettingsError, which `do` has typed.
            }
            #expect(Date().timeIntervalSince(started) < 5, "seed \(seed), script \(index) took too long")
            daemon.done.wait()
        }
    }
}
