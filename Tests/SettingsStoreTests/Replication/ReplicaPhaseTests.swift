import Foundation
import Testing

@testable import SettingsStore

extension Reliability {
    /// A replica session is a state machine: each frame is valid only in its phase. A peer that
    /// breaks the order is disconnected with a reason; the daemon keeps its identity and serves on.
    @Suite("Replica sessions accept each frame only in its phase")
    struct ReplicaPhaseTests {
        let directory = TemporaryDirectory()

        /// A raw replica connection to `daemon` that has said hello and read the answer.
        private func metReplica(_ daemon: DaemonProcess) throws -> PlainSocket {
            let socket = try PlainSocket(path: daemon.socket)
            let hello = WireRequest.Hello(
                replica: .random(), sequence: 0, clockMilliseconds: SettingsConfiguration.systemClock(),
                lineage: Lineage(startingAt: 0))
            socket.send(frame: WireRequest.hello(hello).json(id: 0).serialized())
            let answer = try #require(socket.readLines(count: 1).first)
            #expect(String(decoding: answer, as: UTF8.self).contains(#""ok":true"#))
            return socket
        }

        /// Sends `frames` after the hello and returns the daemon's error frame (what it says
        /// besides telling its neighbours).
        private func refusal(after frames: [ReplicationMessage], daemon: DaemonProcess) throws -> String {
            let socket = try metReplica(daemon)
            for frame in frames { socket.send(frame: frame.json.serialized()) }
            let lines = socket.readLines(count: 2).map { String(decoding: $0, as: UTF8.self) }
            return lines.first { $0.contains(#""ok":false"#) } ?? "no error frame in \(lines)"
        }

        @Test("'forked' after 'start' is refused: the daemon keeps its replica id")
        func forkedMidSession() throws {
            let daemon = try DaemonProcess(directory)
            let before = try daemon.status().replica
            let said = try refusal(after: [.start(cursor: 0), .forked(reason: "forged")], daemon: daemon)
            #expect(said.contains("only valid in place of 'start'"), "\(said)")
            #expect(try daemon.status().replica == before)
            #expect(daemon.cli("set", "still", "serving").status == 0)
        }

        @Test("a second 'start' is refused")
        func secondStart() throws {
            let daemon = try DaemonProcess(directory)
            let said = try refusal(after: [.start(cursor: 0), .start(cursor: 0)], daemon: daemon)
            #expect(said.contains("'start' frame after sending began"), "\(said)")
        }

        @Test("a second hello in a session is refused: after the hello only replication frames count")
        func secondHello() throws {
            let daemon = try DaemonProcess(directory)
            let socket = try metReplica(daemon)
            let hello = WireRequest.Hello(
                replica: .random(), sequence: 0, clockMilliseconds: 0, lineage: Lineage(startingAt: 0))
            socket.send(frame: WireRequest.hello(hello).json(id: 1).serialized())
            let said = socket.readLines(count: 2).map { String(decoding: $0, as: UTF8.self) }.joined()
            #expect(said.contains("unknown replication message 'hello'"), "\(said)")
            #expect(daemon.cli("get", "nothing").status == 1)
        }

        @Test("bucket sums of the wrong count end the session, not the daemon")
        func shortBuckets() throws {
            let daemon = try DaemonProcess(directory)
            let said = try refusal(after: [.start(cursor: 0), .buckets([1, 2, 3])], daemon: daemon)
            #expect(said.contains("must hold 4096 16-digit sums"), "\(said)")
            #expect(daemon.cli("set", "still", "serving").status == 0)
        }
    }
}
