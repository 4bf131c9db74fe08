import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Write rules: no-op writes, nesting depth", .timeLimit(.minutes(2)))
struct WriteRulesTests {
    @Test("writing the value a key holds changes nothing: no sequence, no version, no event")
    func identicalWriteIsNoChange() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(0.5, forKey: "volume")
        let sequence = settings.sequence
        let version = settings.entry(forKey: "volume")?.version
        let recorder = EventRecorder()
        let token = settings.observe(.all, handler: recorder.handler)
        try settings.set(0.5, forKey: "volume")
        try settings.importValues(["volume": 0.5])
        try settings.transaction { try $0.set(0.5, forKey: "volume") }
        #expect(settings.sequence == sequence)
        #expect(settings.entry(forKey: "volume")?.version == version)
        #expect(recorder.all.isEmpty)
        try settings.set(-0.0, forKey: "zero")
        try settings.set(0.0, forKey: "zero")  // == but not identical: a change
        try settings.set(Double.nan, forKey: "nan")
        try settings.set(Double.nan, forKey: "nan")  // != but identical: no change
        #expect(recorder.all.count == 3)
        token.cancel()
    }

    @Test("values nest at most maximumNestingDepth deep on every write path")
    func depthLimit() throws {
        let settings = Settings(inMemoryWith: .init())
        func nested(_ depth: Int) -> SettingValue {
            (0..<depth).reduce(SettingValue.integer(1)) { value, level in
                level.isMultiple(of: 2) ? .array([value]) : .dictionary(["$k": value])
            }
        }
        let limit = SettingValue.maximumNestingDepth
        try settings.set(nested(limit), forKey: "deep")
        #expect(settings.value(forKey: "deep")?.nestingDepth == limit)
        let error = #expect(throws: SettingsError.self) {
            try settings.set(nested(limit + 1), forKey: "deeper")
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("nests \(limit + 1) levels deep") == true)
        #expect(throws: SettingsError.self) { try settings.importValues(["deeper": nested(limit + 1)]) }
        let json = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect((try? SettingValue(jsonText: json)) == nil)
        // Refused on arrival from a replica too, announced as a quota violation.
        let peer = ReplicaID.random()
        let version = SettingVersion(timestamp: HybridTimestamp(milliseconds: 1, counter: 0), replica: peer)
        let applied = try settings.applyRemote(
            [SettingEntry(key: "deeper", value: nested(limit + 1), version: version, sequence: 1)],
            from: peer,
            through: 1, reason: .replica)
        #expect(applied.applied == 0)
        #expect(applied.refused == 1)
        #expect(settings.value(forKey: "deeper") == nil)
    }

    @Test("the deepest value with the widest JSON form fits every frame that carries it")
    func deepestValueFitsEveryFrame() throws {
        // Every level a tag-like dictionary (2 JSON levels each) around a tagged leaf.
        var value = SettingValue.data(Data([1, 2]))
        for _ in 0..<SettingValue.maximumNestingDepth { value = .dictionary(["$x": value]) }
        let settings = Settings(inMemoryWith: .init())
        try settings.set(value, forKey: "k")
        let change = SettingsChange(
            reason: .replica, origin: settings.replicaID,
            changes: [
                .init(key: "k", value: value, version: try #require(settings.entry(forKey: "k")).version)
            ], sequence: 1)
        let frames: [JSONValue] = [
            WireMessage.event(watch: 1, change),
            WireMessage.success(id: 1, ["values": .object(["k": value.json])]),
            WireMessage.success(id: 1, ["document": ExportDocument(values: ["k": value]).json]),
            WireRequest.set(key: "k", value: value).json(id: 1),
        ]
        for frame in frames {
            let parsed = try JSONValue.parse(frame.serialized())
            #expect(parsed == frame)
        }
    }
}
