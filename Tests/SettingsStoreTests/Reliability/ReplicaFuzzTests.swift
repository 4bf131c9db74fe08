import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Generates hostile replication frames from valid ones: fields replaced by extreme numbers,
/// hostile keys and forged versions, then bytes flipped, dropped or inserted.
struct ReplicaFrameFuzzer {
    var generator: SeededGenerator

    /// Numbers no peer should send, and a few it may.
    static let numbers: [String] = [
        "-9223372036854775808", "9223372036854775807", "-1", "0", "1", "4611686018427387905", "1e300", "-0",
        "\"7\"", "null", "[]", "{}", "18446744073709551615",
    ]
    /// Keys no store may hold, and a fine one.
    static let keys: [String] = [
        #""""#, #""\u0001""#, #""a\u0000b""#, #""\u00e9t\u00e9""#, #""fine.key""#,
        "\"" + String(repeating: "k", count: 5_000) + "\"", "12", "null",
    ]

    /// Valid frames of every kind, after the hello.
    func seeds() -> [String] {
        let now = SettingsConfiguration.systemClock()
        let replica = ReplicaID.random()
        let entry = #"{"key":"fuzz.k","value":"v","version":"\#(now).0@\#(replica)","sequence":1}"#
        let sums = String(repeating: "0", count: 16 * ReplicaCache.bucketCount)
        return [
            #"{"op":"start","cursor":0}"#, #"{"op":"ack","through":1,"settled":1}"#,
            #"{"op":"replicate","entries":[\#(entry)],"through":1,"sequence":1}"#,
            #"{"op":"neighbours","replicas":["\#(replica)"]}"#,
            #"{"op":"check","digest":"0000000000000000","settled":0}"#, #"{"op":"agreed","settled":0}"#,
            #"{"op":"busy"}"#, #"{"op":"buckets","sums":"\#(sums)"}"#,
            #"{"op":"repair","buckets":[1],"entries":[\#(entry)],"final":false,"applied":0}"#,
            #"{"op":"forked","reason":"fuzz"}"#,
        ]
    }

    mutating func frame() -> String {
        let seeds = seeds()
        var frame = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: frame = replaceNumber(in: frame)
            case 1: frame = frame.replacingOccurrences(of: #""fuzz.k""#, with: pick(Self.keys))
            case 2:
                frame = frame.replacingOccurrences(
                    of: "\(SettingsConfiguration.systemClock() / 1000)", with: "9")
            default: frame = flipByte(in: frame)
            }
        }
        return frame
    }

    private mutating func pick(_ choices: [String]) -> String {
        choices[Int.random(in: 0..<choices.count, using: &generator)]
    }

    /// One number of the frame (a run of digits after a colon) replaced by an extreme one.
    private mutating func replaceNumber(in frame: String) -> String {
        var characters = Array(frame)
        let starts = characters.indices.filter {
            $0 > 0 && characters[$0 - 1] == ":" && characters[$0].isNumber
        }
        guard let start = starts.isEmpty ? nil : starts[Int.random(in: 0..<starts.count, using: &generator)]
        else { return frame }
        var end = start
        while end < characters.count, characters[end].isNumber { end += 1 }
        characters.replaceSubrange(start..<end, with: Array(pick(Self.numbers)))
        return String(characters)
    }

    private mutating func flipByte(in frame: String) -> String {
        var bytes = Array(frame.utf8)
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        let byte = UInt8.random(in: 0x20...0xFF, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: bytes[position] = byte
        case 1: bytes.remove(at: position)
        default: bytes.insert(byte, at: position)
        }
        return String(decoding: bytes.filter { $0 != 0x0A }, as: UTF8.self)
    }
}

extension SyncReliability {
    /// Seeded fuzzing of the roles the client fuzzer never takes: a replica peer, and the hub's rows.
    @Suite("Fuzzing the replica role and the hub's rows")
    struct ReplicaFuzzTests {
        let directory = TemporaryDirectory()

        /// What must hold of a daemon after any input: it serves, every key it holds is one any
        /// path accepts, and its store exports.
        private func checkInvariants(_ daemon: DaemonProcess, seed: UInt64) throws {
            #expect(daemon.cli("set", "after.fuzz", "ok").status == 0, "seed \(seed)")
            #expect(daemon.cli("get", "after.fuzz").output == "ok\n", "seed \(seed)")
            let keys = daemon.cli("list", "--keys")
            #expect(keys.status == 0, "seed \(seed)")
            for key in keys.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                #expect(
                    (try? KeyValidation.validate(String(key), maximumBytes: 256)) != nil,
                    "seed \(seed): stored key \(key.debugDescription)")
            }
            let export = daemon.cli("export")
            #expect(export.status == 0, "seed \(seed)")
            #expect((try? ExportDocument(jsonText: Array(export.output.utf8))) != nil, "seed \(seed)")
            #expect(try daemon.status().replica == daemon.status().replica)
        }

        @Test("hostile frames from a replica peer leave the daemon serving, its identity and its data sound")
        func replicaRole() throws {
            let seed = SeededGenerator.seed
            var fuzzer = ReplicaFrameFuzzer(generator: SeededGenerator(seed: seed))
            let daemon = try DaemonProcess(directory)
            let identity = try daemon.status().replica
            let sessions = ProcessInfo.processInfo.environment["SETTINGSD_FULL"] == nil ? 100 : 3_000
            for _ in 0..<sessions {
                let socket = try PlainSocket(path: daemon.socket)
                let hello = WireRequest.Hello(
                    replica: .random(), sequence: 0, clockMilliseconds: SettingsConfiguration.systemClock(),
                    lineage: Lineage(startingAt: 0))
                socket.send(frame: WireRequest.hello(hello).json(id: 0).serialized())
                _ = socket.readLines(count: 1)
                // `start` first, so most frames meet a running session, not only the greeting.
                socket.send(frame: #"{"op":"start","cursor":0}"#)
                for _ in 0..<12 { socket.send(frame: fuzzer.frame()) }
            }
            try checkInvariants(daemon, seed: seed)
            // `forked` is valid only in place of `start`: no frame may have renamed the daemon.
            #expect(try daemon.status().replica == identity, "seed \(seed)")
        }

        @Test(
            "random rows written into the hub leave its members serving and their data sound",
            .enabled(
                if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
        )
        func hubRows() async throws {
            let seed = SeededGenerator.seed
            var generator = SeededGenerator(seed: seed)
            let cluster = try HubReliability.HubSyncTests.hub()
            let role = try cluster.makeRole("fuzz")
            let daemon = try DaemonProcess(
                directory, arguments: ["--hub", cluster.conninfo(user: role.name, password: role.password)])
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            func hex(_ bytes: [UInt8]) -> String {
                "'\\x" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "'::bytea"
            }
            let numbers: [Int64] = [.min, -1, 0, 1, 1 << 40, 1 << 62, (1 << 62) + 1, .max]
            var rows: [(key: String, value: String, hlc: Int64, replica: String, sequence: Int64)] = []
            for index in 0..<200 {
                let key =
                    [
                        "'fuzz.\(index)'", "''", "E'c\\x01\(index)'",
                        "repeat('k', \(Int.random(in: 1...3_000, using: &generator)))",
                        "'\(index).é'",
                    ][Int.random(in: 0..<5, using: &generator)]
                let value: String
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: value = "NULL"
                case 1: value = hex(SettingValue.string("v\(index)").encoded())
                case 2:
                    value = hex(
                        (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                            UInt8.random(in: 0...255, using: &generator)
                        })
                default:
                    value = hex(
                        SettingValue.date(
                            Date(timeIntervalSinceReferenceDate: [.nan, .infinity, 1e300, 1][index % 4])
                        ).encoded())
                }
                let hlc =
                    Bool.random(using: &generator)
                    ? numbers[Int.random(in: 0..<numbers.count, using: &generator)]
                    : Int64(SettingsConfiguration.systemClock() << 16)
                let sequence =
                    Bool.random(using: &generator)
                    ? numbers[Int.random(in: 0..<numbers.count, using: &generator)] : Int64(10_000 + index)
                let replica = hex(
                    (0..<(Bool.random(using: &generator) ? 16 : Int.random(in: 0...20, using: &generator)))
                        .map { _ in UInt8.random(in: 0...255, using: &generator) })
                rows.append((key, value, hlc, replica, sequence))
            }
            // Half as a hand edit would write them (any hub sequence number), half as the tenant
            // can: pushed with her own credentials through settingsd.push, in batches of ten.
            try cluster.psql(
                "INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by) VALUES "
                    + rows.prefix(100).map {
                        "('\(role.name)', \($0.key), \($0.value), \($0.hlc), \($0.replica), \($0.sequence), \($0.replica))"
                    }
                    .joined(separator: ", ") + " ON CONFLICT DO NOTHING")
            let pushes = stride(from: 100, to: rows.count, by: 10).map { start in
                // A key once a batch (PostgreSQL refuses a batch that names one twice).
                var named = Set<String>()
                let batch = rows[start..<min(start + 10, rows.count)].filter { named.insert($0.key).inserted }
                let through = numbers[Int.random(in: 0..<numbers.count, using: &generator)]
                return """
                    SELECT settingsd.push(current_user, NULL, \(batch.first?.replica ?? "NULL"), \(through),
                        ARRAY[\(batch.map(\.key).joined(separator: ", "))]::text[],
                        ARRAY[\(batch.map(\.value).joined(separator: ", "))]::bytea[],
                        ARRAY[\(batch.map { String($0.hlc) }.joined(separator: ", "))]::bigint[],
                        ARRAY[\(batch.map(\.replica).joined(separator: ", "))]::bytea[], NULL, NULL, NULL);
                    """
            }
            let pushed = DaemonProcess.run(
                [cluster.conninfo(user: role.name, password: role.password), "-Atq"]
                    + pushes.flatMap { ["-c", $0] },
                through: "/usr/bin/psql")
            // Each batch is its own transaction, and each lands.
            #expect(
                pushed.output.split(separator: "\n").count == pushes.count, "seed \(seed): \(pushed.error)")
            #expect(daemon.cli("set", "wake", "1").status == 0)
            try await waitUntil(timeout: 60) {
                let hub = try daemon.status().hubs.first
                return hub?.isConnected == true && hub?.pendingUp == 0
            }
            try checkInvariants(daemon, seed: seed)
        }
    }
}
