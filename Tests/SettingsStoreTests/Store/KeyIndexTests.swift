import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("The key index agrees with a dictionary of rows", .timeLimit(.minutes(1)))
struct KeyIndexTests {
    @Test("inserts, lookups, removals, reused rows, growth and compaction keep every key at its row")
    func matchesDictionary() {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        var index = KeyIndex()
        var model: [String: Int32] = [:]
        var freeRows: [Int32] = []
        var nextRow: Int32 = 0
        let padding = String(repeating: "p", count: 40)
        for step in 0..<60_000 {
            // A table grown ahead of need moves every slot, deletion marks among them, at once.
            if step == 30_000 { index.reserveCapacity(model.count * 3) }
            let key = "key.\(Int.random(in: 0..<20_000, using: &generator)).\(padding)"
            if Int.random(in: 0..<3, using: &generator) == 0 {
                let removed = index.remove(key)
                #expect(removed == model.removeValue(forKey: key))
                if let removed { freeRows.append(removed) }
                continue
            }
            let fresh = freeRows.last ?? nextRow
            let (row, inserted) = index.row(of: key, insertingInto: fresh)
            if let existing = model[key] {
                #expect(!inserted)
                #expect(row == existing)
            } else {
                #expect(inserted)
                #expect(row == fresh)
                model[key] = fresh
                if freeRows.popLast() == nil { nextRow += 1 }
            }
        }
        #expect(index.count == model.count)
        #expect(Set(index.rows) == Set(model.values))
        for (key, row) in model {
            #expect(index.row(of: key) == row)
            #expect(index.key(ofRow: row) == key)
            #expect(index.holdsKey(row))
        }
        for row in freeRows { #expect(!index.holdsKey(row)) }
    }

    @Test("canonically equivalent keys are one key, and prefixes compare normal forms")
    func unicodeTwins() {
        var index = KeyIndex()
        let (row, inserted) = index.row(of: "caf\u{E9}.size", insertingInto: 0)
        #expect(inserted && row == 0)
        #expect(index.row(of: "cafe\u{301}.size") == 0)
        #expect(index.row(of: "cafe\u{301}.size", insertingInto: 1) == (0, false))
        #expect(index.key(ofRow: 0) == "caf\u{E9}.size")
        #expect(index.key(ofRow: 0, hasPrefix: Array(KeyIdentity.normalize("cafe\u{301}.").utf8)))
        #expect(index.remove("cafe\u{301}.size") == 0)
        #expect(index.row(of: "caf\u{E9}.size") == nil)
        #expect(index.count == 0)
    }
}
