import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Generates hostile frames: random bytes, mutated and truncated valid requests, deep nesting,
/// invalid UTF-8, huge key lists, oversized frames. Seed frames never write, so the store's data
/// must come out unchanged.
struct FrameFuzzer {
    var generator: SeededGenerator

    static let seeds: [String] = [
        #"{"id":1,"op":"get","key":"fuzz.a"}"#, #"{"id":2,"op":"getMany","keys":["fuzz.a","fuzz.b"]}"#,
        #"{"id":3,"op":"list","prefix":"fuzz.","values":true}"#, #"{"id":4,"op":"status"}"#,
        #"{"id":5,"op":"watch","keys":["fuzz.a"],"prefixes":["fuzz."]}"#,
        #"{"id":6,"op":"unwatch","watch":1}"#,
        #"{"id":7,"op":"hello","version":1,"role":"client"}"#, #"{"id":8,"op":"export"}"#,
        #"{"id":9,"op":"describe","key":"fuzz.a"}"#, #"{"id":10,"op":"schema"}"#,
        #"{"id":11,"op":"history","key":"fuzz.","since":0,"until":99999999999999,"limit":5}"#,
        #"{"id":12,"op":"export","at":1700000000000}"#,
    ]

    mutating func frame() -> [UInt8] {
        // Per 10,000 frames: the costly kinds (huge lists, oversized frames) are rare, so a run
        // of 100,000 stays within seconds while still exercising each kind many times.
        switch Int.random(in: 0..<10_000, using: &generator) {
        case 0..<2_500: return randomBytes(count: Int.random(in: 0...300, using: &generator)) + [0x0A]
        case 2_500..<6_000: return mutated() + [0x0A]
        case 6_000..<7_500: return truncated() + [0x0A]
        case 7_500..<8_500: return nested() + [0x0A]
        case 8_500..<9_980: return invalidUTF8() + [0x0A]
        case 9_980..<9_998: return hugeKeyList() + [0x0A]
        default: return oversized()
        }
    }

    private mutating func seed() -> [UInt8] {
        Array(Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &generator)].utf8)
    }

    private mutating func randomBytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return byte == 0x0A ? 0x20 : byte
        }
    }

    private mutating func mutated() -> [UInt8] {
        var bytes = seed()
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[position] = randomBytes(count: 1)[0]
            case 1: bytes.remove(at: position)
            default: bytes.insert(randomBytes(count: 1)[0], at: position)
            }
            if bytes.isEmpty { bytes = [0x7B] }
        }
        return bytes
    }

    private mutating func truncated() -> [UInt8] {
        let bytes = seed()
        return Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
    }

    private mutating func nested() -> [UInt8] {
        let depth = Int.random(in: 10...2_000, using: &generator)
        let open = Bool.random(using: &generator) ? "[" : "{\"a\":"
        let close = open == "[" ? "]" : "}"
        return Array(
            ("{\"id\":9,\"op\":\"get\",\"key\":" + String(repeating: open, count: depth) + "1"
                + String(repeating: close, count: depth) + "}").utf8)
    }

    private mutating func invalidUTF8() -> [UInt8] {
        Array(#"{"id":10,"op":"get","key":""#.utf8)
            + [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xF8, 0x88]][
                Int.random(in: 0..<4, using: &generator)]
            + Array(#""}"#.utf8)
    }

    /// A frame over the default 8 MiB limit with no newline: the daemon answers frameTooLarge and closes.
    private func oversized() -> [UInt8] {
        Array(repeating: UInt8(ascii: "x"), count: (8 << 20) + 10)
    }

    private mutating func hugeKeyList() -> [UInt8] {
        let count = Int.random(in: 10_001...40_000, using: &generator)
        return Array(
            ("{\"id\":11,\"op\":\"getMany\",\"keys\":["
                + Array(repeating: "\"k\"", count: count).joined(separator: ",") + "]}").utf8)
    }
}

extension SyncReliability {
    @Suite("Protocol fuzzing against a live daemon")
    struct ProtocolFuzzTests {
        let directory = TemporaryDirectory()

        @Test(
            "100,000 hostile frames leave the daemon alive, a well-behaved client unharmed and the data unchanged"
        )
        func fuzz() async throws {
            let seed = SeededGenerator.seed
            let frames = SuiteScale.pick(ci: 100_000, full: 1_000_000)
            let daemon = try DaemonProcess(directory)
            let setup = try daemon.client()
            for index in 0..<20 {
                try setup.request(.set(key: "canary.\(index)", value: .integer(Int64(index))))
            }
            let before = try setup.request(.export)["document"]

            let goodErrors = Mutex<[String]>([])
            let stop = Atomic<Bool>(false)
            let good = ThreadGroup()
            let socket = daemon.socket
            good.run {
                do {
                    let client = try BlockingClient(socketPath: socket, timeout: 10)
                    var round: Int64 = 0
                    while !stop.load(ordering: .relaxed) {
                        round += 1
                        try client.request(.set(key: "good.key", value: .integer(round)))
                        guard try client.request(.get(key: "good.key"))["value"] == .integer(round) else {
                            goodErrors.withLock { $0.append("read back a wrong value in round \(round)") }
                            return
                        }
                    }
                } catch {
                    goodErrors.withLock { $0.append("\(error)") }
                }
            }

            var fuzzer = FrameFuzzer(generator: SeededGenerator(seed: seed))
            var connection = try RawSocket(path: socket)
            var reconnects = 0
            var pending: [UInt8] = []
            for _ in 0..<frames {
                pending += fuzzer.frame()
                if pending.count < 64 * 1024 { continue }
                if !connection.send(pending) || connection.isClosedByPeer {
                    connection = try RawSocket(path: socket)
                    reconnects += 1
                }
                pending.removeAll(keepingCapacity: true)
            }
            connection.send(pending)
            stop.store(true, ordering: .relaxed)
            await good.wait()

            let after = try daemon.client()
            var document = try after.request(.export)["document"]
            if case .object(var members)? = document, case .object(var values)? = members["values"] {
                values["good.key"] = nil
                members["values"] = .object(values)
                document = .object(members)
            }
            #expect(document == before, "seed \(seed): the data changed")
            #expect(goodErrors.withLock { $0 }.isEmpty, "seed \(seed): \(goodErrors.withLock { $0 })")
            #expect(reconnects > 0, "seed \(seed): no frame was large enough to be refused")
            #expect(daemon.process.isRunning, "seed \(seed): the daemon died")
        }
    }
}
