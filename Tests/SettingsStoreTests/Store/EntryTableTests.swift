import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("The entry table agrees with a plain dictionary", .timeLimit(.minutes(1)))
struct EntryTableTests {
    @Test("random sets, replacements and removals from several replicas: same entries, keys and stamps")
    func matchesDictionary() {
        var generator = SeededGenerator(seed: 42)
        let replicas = (0..<3).map { _ in ReplicaID.random() }
        var table = EntryTable()
        var model: [String: SettingEntry] = [:]
        for step in 0..<5_000 {
            let key = "key.\(Int.random(in: 0..<300, using: &generator))"
            if Int.random(in: 0..<4, using: &generator) == 0 {
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
                continue
            }
            let value: SettingValue? =
                Bool.random(using: &generator)
                ? .integer(Int64(step)) : (step % 3 == 0 ? nil : .string("s\(step)"))
            let entry = SettingEntry(
                key: key, value: value,
                version: SettingVersion(
                    timestamp: HybridTimestamp(milliseconds: UInt64(step), counter: 0),
                    replica: replicas[Int.random(in: 0..<3, using: &generator)]),
                sequence: Int64(step))
            #expect(table.updateValue(entry, forKey: key).replaced == model.updateValue(entry, forKey: key))
        }
        #expect(table.count == model.count)
        #expect(Set(table.keys) == Set(model.keys))
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == model)
        for (key, entry) in model {
            #expect(table[key] == entry)
            #expect(table.value(forKey: key) == entry.value)
        }
        let cutoff = HybridTimestamp(milliseconds: 2_500, counter: 0)
        #expect(
            Set(table.tombstones(below: cutoff).map(\.key))
                == Set(model.values.filter { $0.value == nil && $0.version.timestamp < cutoff }.map(\.key)))
        let ceiling = HybridTimestamp(milliseconds: 4_000, counter: 0)
        let highWater = table.highWater(ceiling: ceiling)
        #expect(highWater.sequence == model.values.map(\.sequence).max())
        #expect(highWater.timestamp == model.values.map(\.version.timestamp).filter { $0 <= ceiling }.max())
    }
}
