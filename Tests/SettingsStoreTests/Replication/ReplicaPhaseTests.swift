import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
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

        @Test("repair answers claiming 2^62 repaired keys, again and again, leave the daemon serving")
        func hugeRepairCounts() async throws {
            let daemon = try DaemonProcess(directory)
            let socket = try metReplica(daemon)
            socket.send(frame: ReplicationMessage.start(cursor: 0).json.serialized())
            let claim = ReplicationMessage.repair(buckets: [], entries: [], final: true, applied: 1 << 62)
            for _ in 0..<4 { socket.send(frame: claim.json.serialized()) }
            try await waitUntil(timeout: 60) { (try daemon.status().peers.first?.repairedKeys ?? 0) > 0 }
            #expect(daemon.cli("set", "still", "serving").status == 0)
            #expect(try daemon.status().peers.first.map { $0.repairedKeys >= 1 << 62 } == true)
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

        @Test("a cursor of Int64.min is refused at the gate, and status keeps working")
        func negativeCursor() throws {
            let daemon = try DaemonProcess(directory)
            let said = try refusal(after: [.start(cursor: .min)], daemon: daemon)
            #expect(said.contains("field 'cursor' -9223372036854775808 is out of range"), "\(said)")
            #expect(daemon.cli("status").status == 0)
        }

        @Test("a non-ASCII character in bucket sums is a protocol error, not a trap")
        func nonASCIIBuckets() throws {
            let daemon = try DaemonProcess(directory)
            let socket = try metReplica(daemon)
            socket.send(frame: ReplicationMessage.start(cursor: 0).json.serialized())
            let sums = "é" + String(repeating: "0", count: 16 * 4096 - 2)
            socket.send(frame: #"{"op":"buckets","sums":""# + sums + #""}"#)
            let said = socket.readLines(count: 2).map { String(decoding: $0, as: UTF8.self) }.joined()
            #expect(said.contains("16 hexadecimal digits"), "\(said)")
            #expect(daemon.cli("status").status == 0)
        }

        @Test(
            "entries with an empty or control-character key, a forged stamp or a non-finite date are never stored"
        )
        func hostileEntries() async throws {
            let daemon = try DaemonProcess(directory)
            let author = ReplicaID.random()
            let now = HybridTimestamp(milliseconds: SettingsConfiguration.systemClock(), counter: 0)
            let version = SettingVersion(timestamp: now, replica: author)
            let far = SettingVersion(timestamp: HybridTimestamp(rawValue: 1 << 63), replica: author)
            let hostile = [
                SettingEntry(key: "", value: nil, version: version, sequence: 1),
                SettingEntry(key: "bad\u{1}key", value: nil, version: version, sequence: 1),
                SettingEntry(key: "clock.forged", value: "x", version: far, sequence: 1),
                SettingEntry(
                    key: "date.nan", value: .date(Date(timeIntervalSinceReferenceDate: .nan)),
                    version: version,
                    sequence: 1),
            ]
            // Each on a connection of its own (a refused frame ends its session).
            for entry in hostile + [SettingEntry(key: "fine", value: "kept", version: version, sequence: 1)] {
                let socket = try metReplica(daemon)
                socket.send(frame: ReplicationMessage.start(cursor: 0).json.serialized())
                socket.send(
                    frame: ReplicationMessage.replicate(entries: [entry], through: 1, sequence: 1).json
                        .serialized())
                _ = socket.readLines(count: 2)
            }
            try await waitUntil(timeout: 10) { daemon.cli("get", "fine").output == "kept\n" }
            #expect(daemon.cli("list", "--keys").output == "fine\n")
            #expect(daemon.cli("export").status == 0)
        }
    }
}
