import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Daemon lifecycle: shutdown, exclusivity, crashes")
    struct DaemonLifecycleTests {
        let directory = TemporaryDirectory()

        @Test("SIGTERM stops cleanly: exit 0, socket removed, writes durable")
        func gracefulStop() throws {
            let daemon = try DaemonProcess(directory)
            _ = daemon.cli("set", "kept", "yes")
            #expect(daemon.terminate() == 0)
            #expect(!FileManager.default.fileExists(atPath: daemon.socket))
            #expect(DaemonProcess.run(["get", "kept", "--db", daemon.database]).output == "yes\n")
        }

        @Test("a second daemon on the same database or the same socket exits with a clear message")
        func oneDaemonPerDatabaseAndSocket() throws {
            let daemon = try DaemonProcess(directory)
            let sameDatabase = DaemonProcess.run([
                "run", "--db", daemon.database, "--socket", daemon.socket + "2",
            ])
            #expect(sameDatabase.status == 1)
            #expect(
                sameDatabase.error.contains("already open in process \(daemon.process.processIdentifier)"))
            let sameSocket = DaemonProcess.run([
                "run", "--db", directory.file("other.sqlite"), "--socket", daemon.socket,
            ])
            #expect(sameSocket.status == 1)
            #expect(sameSocket.error.contains("already listening on '\(daemon.socket)'"))
        }

        @Test("a stale socket left by a crash is replaced")
        func staleSocket() throws {
            let daemon = try DaemonProcess(directory)
            daemon.kill()
            #expect(FileManager.default.fileExists(atPath: daemon.socket))
            try daemon.start()
            #expect(daemon.cli("set", "after", "restart").status == 0)
        }

        @Test("SIGKILL in the middle of a write storm loses no acknowledged write")
        func killDuringWriteStorm() async throws {
            let daemon = try DaemonProcess(directory)
            let acknowledged = Mutex<[Int]>([])
            let socket = daemon.socket
            let writers = ThreadGroup()
            for writer in 0..<4 {
                writers.run {
                    guard let client = try? BlockingClient(socketPath: socket, timeout: 5) else { return }
                    for index in 0..<100_000 {
                        let value = writer * 1_000_000 + index
                        guard
                            (try? client.request(
                                .set(key: "storm.\(writer).\(index)", value: .integer(Int64(value))))) != nil
                        else { return }
                        acknowledged.withLock { $0.append(value) }
                    }
                }
            }
            try await waitUntil { acknowledged.withLock { $0.count } > 2_000 }
            daemon.kill()
            await writers.wait()
            try daemon.start()
            let client = try daemon.client()
            let values = acknowledged.withLock { $0 }
            var missing: [Int] = []
            for chunk in stride(from: 0, to: values.count, by: 5_000) {
                let slice = values[chunk..<min(chunk + 5_000, values.count)]
                let keys = slice.map { "storm.\($0 / 1_000_000).\($0 % 1_000_000)" }
                let fields = try client.request(.getMany(keys: keys))
                for (key, value) in zip(keys, slice) where fields["values"]?[key] != .integer(Int64(value)) {
                    missing.append(value)
                }
            }
            #expect(values.count > 2_000)
            #expect(missing.isEmpty, "lost \(missing.count) of \(values.count) acknowledged writes")
        }
    }
}
