import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Crash durability: SIGKILL during write storms", .serialized)
    struct CrashDurabilityTests {
        let directory = TemporaryDirectory()

        @Test(
            "every acknowledged write survives 20 rounds of SIGKILL, and the file stays intact",
            arguments: ["normal", "full"])
        func rounds(durability: String) async throws {
            let rounds = SuiteScale.pick(ci: 20, full: 100)
            var generator = SeededGenerator(seed: SeededGenerator.seed)
            let daemon = try DaemonProcess(directory, arguments: ["--durability", durability])
            var acknowledgedTotal = 0
            for round in 0..<rounds {
                let acknowledged = Mutex<[String: Int64]>([:])
                let socket = daemon.socket
                let writers = ThreadGroup()
                for writer in 0..<2 {
                    writers.run {
                        guard let client = try? BlockingClient(socketPath: socket, timeout: 5) else { return }
                        for index in 0..<1_000_000 {
                            let key = "round.\(round).w\(writer).\(index % 200)"
                            let value = Int64(index)
                            guard (try? client.request(.set(key: key, value: .integer(value)))) != nil else {
                                return
                            }
                            acknowledged.withLock { $0[key] = value }
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...150, using: &generator)))
                daemon.kill()
                await writers.wait()
                let integrity = DaemonProcess.run(
                    [daemon.database, "PRAGMA integrity_check;"], through: "/usr/bin/sqlite3")
                #expect(integrity.output == "ok\n", "round \(round): \(integrity.output)")
                try daemon.start()
                let expected = acknowledged.withLock { $0 }
                acknowledgedTotal += expected.count
                let client = try daemon.client()
                let fields = try client.request(.getMany(keys: Array(expected.keys)))
                // A write may be durable without its answer having reached the writer, so a key may
                // hold a later value than the last acknowledged one, never an earlier one.
                let lost = expected.filter { key, value in
                    guard case .integer(let stored)? = fields["values"]?[key] else { return true }
                    return stored < value
                }
                #expect(
                    lost.isEmpty,
                    "round \(round) (\(durability)): lost \(lost.count) of \(expected.count) acknowledged writes"
                )
            }
            #expect(acknowledgedTotal > rounds * 10)
        }
    }
}
