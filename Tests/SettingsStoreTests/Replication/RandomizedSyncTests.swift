import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Seeded random runs of in-process replicas: partitions, skewed clocks, crashes and replayed
/// batches, then a heal, checked against what each write saw.
@Suite("Replica sync: seeded random partitions, clocks, crashes and replays", .timeLimit(.minutes(2)))
struct RandomizedSyncTests {
    /// One write as the test made it, in real-time order.
    private struct Write {
        let key: String
        let value: SettingValue?
        let version: SettingVersion
        /// Whether the writer held the winning state of every earlier write to the key.
        let sawEverything: Bool
    }

    /// A replica: its file, its skewed clock, and the live store (replaced after a crash).
    private final class Replica {
        let path: String
        let clock: SkewedClock
        var store: Settings

        init(path: String, clock: SkewedClock) throws {
            self.path = path
            self.clock = clock
            store = try Settings(path: path, configuration: SettingsConfiguration(clock: clock.read))
        }

        /// Drops everything in flight and starts again from the file.
        func crash() throws {
            store.close()
            store = try Settings(path: path, configuration: SettingsConfiguration(clock: clock.read))
        }
    }

    @Test("after healing, replicas agree and every write that saw the latest state won", arguments: 0..<3)
    func randomRun(round: Int) async throws {
        let seed = SeededGenerator.seed &+ UInt64(round)
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory("random\(round)")
        let replicas = try (0..<Int.random(in: 3...5, using: &random)).map { index in
            try Replica(
                path: directory.file("r\(index).sqlite"),
                clock: SkewedClock(
                    offsetMilliseconds: Int64.random(in: -24 * hour...24 * hour, using: &random)))
        }
        var links: [[Int]: InProcessLink] = [:]
        func toggle(_ pair: [Int]) {
            if let link = links.removeValue(forKey: pair) {
                link.disconnect()
            } else {
                links[pair] = InProcessLink(replicas[pair[0]].store, replicas[pair[1]].store)
            }
        }
        var writes: [Write] = []
        let keys = (0..<10).map { "key.\($0)" }
        for step in 0..<SuiteScale.pick(ci: 300, full: 3_000) {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                let writer = replicas.randomElement(using: &random)!.store
                let key = keys.randomElement(using: &random)!
                let latest = writes.filter { $0.key == key }.map(\.version).max()
                let held = writer.entry(forKey: key)?.version
                let value: SettingValue? =
                    Int.random(in: 0..<5, using: &random) == 0 ? nil : .integer(Int64(step))
                try writer.transaction { try $0.set(value, forKey: key) }
                guard let entry = writer.entry(forKey: key), entry.version != held else { continue }
                writes.append(
                    Write(key: key, value: value, version: entry.version, sawEverything: held == latest))
            case 55..<75:
                let first = Int.random(in: 0..<replicas.count, using: &random)
                let second = (first + Int.random(in: 1..<replicas.count, using: &random)) % replicas.count
                toggle([min(first, second), max(first, second)])
            case 75..<85:
                links.values.randomElement(using: &random)?.replayOldBatch(
                    pick: Int.random(in: 0..<1_000, using: &random))
            case 85..<90:
                let index = Int.random(in: 0..<replicas.count, using: &random)
                for pair in links.keys where pair.contains(index) { toggle(pair) }
                try replicas[index].crash()
            default:
                try await Task.sleep(for: .milliseconds(Int.random(in: 0..<3, using: &random)))
            }
        }
        // Heal: every pair connected.
        for link in links.values { link.disconnect() }
        links = [:]
        for first in replicas.indices {
            for second in replicas.indices where second > first { toggle([first, second]) }
        }
        let stores = replicas.map(\.store)
        do {
            try await waitForAgreement(of: stores)
        } catch {
            let entries = stores.map { store in
                "\(store.replicaID): "
                    + keys.map { "\($0) \(String(describing: store.entry(forKey: $0)))" }.joined(
                        separator: "; ")
            }
            Issue.record("seed \(seed): \(error)\n\(entries.joined(separator: "\n"))")
            throw error
        }
        let reference = stores[0]
        for store in stores.dropFirst() {
            for key in keys {
                #expect(
                    store.entry(forKey: key)?.version == reference.entry(forKey: key)?.version, "seed \(seed)"
                )
                #expect(store.value(forKey: key) == reference.value(forKey: key), "seed \(seed) key \(key)")
            }
        }
        for key in keys {
            guard let last = writes.last(where: { $0.key == key }), last.sawEverything else { continue }
            #expect(reference.value(forKey: key) == last.value, "seed \(seed): \(key) lost its last write")
        }
        // A partitioned run may end with no key's last write made where everything was seen (for
        // each key, about one chance in three): one made now, on the healed replicas, has seen
        // everything, and must win everywhere.
        let key = keys.randomElement(using: &random) ?? "key.0"
        let writer = stores.randomElement(using: &random) ?? reference
        try writer.set("after healing", forKey: key)
        try await waitForAgreement(of: stores)
        for store in stores {
            #expect(
                store.value(forKey: key) == "after healing",
                "seed \(seed): \(key) lost the write after healing")
        }
        for link in links.values { link.disconnect() }
        for replica in replicas { replica.store.close() }
    }
}
