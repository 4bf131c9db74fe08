import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Convergence under chaos: real daemons, crashes, restarts")
    struct ChaosConvergenceTests {
        let directory = TemporaryDirectory()

        @Test(
            "three daemons in a ring with random crashes, restarts, writes and deletes converge; nothing deleted comes back"
        )
        func chaos() async throws {
            let seed = SeededGenerator.seed
            var generator = SeededGenerator(seed: seed)
            let sockets = (0..<3).map { _ in "/tmp/sdt-chaos-\(UUID().uuidString.prefix(8)).sock" }
            let daemons = try (0..<3).map { index in
                try DaemonProcess(
                    directory, database: directory.file("r\(index).sqlite"), socket: sockets[index],
                    arguments: ["--peer", sockets[(index + 1) % 3]])
            }
            var up = [true, true, true]
            var lastDeleted: Set<String> = []
            let rounds = SuiteScale.pick(ci: 40, full: 400)
            for _ in 0..<rounds {
                let target = Int.random(in: 0..<3, using: &generator)
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<2 where up.filter({ $0 }).count > 1 && up[target]:
                    daemons[target].kill()
                    up[target] = false
                case 2..<4 where !up[target]:
                    try daemons[target].start()
                    up[target] = true
                default:
                    guard let live = (0..<3).filter({ up[$0] }).randomElement(using: &generator) else {
                        continue
                    }
                    let client = try daemons[live].client()
                    for _ in 0..<20 {
                        let key = "chaos.\(Int.random(in: 0..<30, using: &generator))"
                        if Int.random(in: 0..<4, using: &generator) == 0 {
                            // Like a user, delete what this replica shows; deleting a key it has not
                            // received yet is a no-op, and the key would rightly arrive later.
                            guard try client.request(.delete(key: key))["existed"] == .bool(true) else {
                                continue
                            }
                            lastDeleted.insert(key)
                        } else {
                            try client.request(
                                .set(key: key, value: .integer(Int64.random(in: 0...1000, using: &generator)))
                            )
                            lastDeleted.remove(key)
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...40, using: &generator)))
            }
            for index in 0..<3 where !up[index] { try daemons[index].start() }
            try await waitUntil(timeout: 30) {
                let digests = try daemons.map {
                    try DaemonStatus(fields: $0.client().request(.status)).digest
                }
                return Set(digests).count == 1
            }
            for daemon in daemons {
                let keys = try daemon.client().request(.list(prefix: "chaos.", includeValues: false))["keys"]
                guard case .array(let present)? = keys else { continue }
                let resurrected = present.compactMap { if case .string(let key) = $0 { key } else { nil } }
                    .filter { lastDeleted.contains($0) }
                #expect(resurrected.isEmpty, "seed \(seed): deleted keys came back: \(resurrected)")
            }
        }
    }
}
