import Foundation
import Synchronization
import Testing

@testable import SettingsStore

@Suite("Replay: a watch resumed from a sequence hears exactly what it missed, or is told it cannot")
struct ReplayTests {
    @Test(
        "the changes after a sequence come in order, grouped by reason and origin, filtered, each with its number"
    )
    func replayInOrder() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(1, forKey: "a")
        let start = settings.sequence
        try settings.set(2, forKey: "a")
        try settings.set("x", forKey: "b.one")
        try settings.transaction(reason: .import) { try $0.set(3, forKey: "b.two") }
        try settings.removeValue(forKey: "a")
        try settings.removeValue(forKey: "never")  // deletes nothing: announced to nobody, replayed to nobody
        let (changes, through) = try settings.changes(since: start)
        #expect(through == settings.sequence)
        #expect(changes.map(\.reason) == [.local, .import, .local])
        #expect(changes.map(\.keys) == [["a", "b.one"], ["b.two"], ["a"]])
        #expect(changes[0].changes.map(\.value) == [2, "x"] && changes[2].changes[0].value == nil)
        #expect(changes.map(\.sequence) == [start + 2, start + 3, start + 4])
        let filtered = try settings.changes(since: start, matching: .prefixes(["b."])).changes
        #expect(filtered.map(\.keys) == [["b.one"], ["b.two"]])
        #expect(try settings.changes(since: settings.sequence).changes.isEmpty)
        let ahead = #expect(throws: SettingsError.self) { try settings.changes(since: settings.sequence + 1) }
        #expect(ahead?.code == .invalidValue)
    }

    @Test("a replay groups at most 1,000 keys into one change")
    func replayGroupsAreBounded() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.importValues(
            Dictionary(uniqueKeysWithValues: (0..<2_500).map { ("k\($0)", SettingValue.integer(Int64($0))) }))
        let changes = try settings.changes(since: 0).changes
        #expect(changes.map(\.changes.count) == [1_000, 1_000, 500])
        #expect(Set(changes.flatMap(\.keys)).count == 2_500)
    }

    @Test(
        "a history pruned past the point, or off, is historyCompacted naming the oldest point it can replay from"
    )
    func compactedHistoryIsNamed() throws {
        var configuration = SettingsConfiguration()
        configuration.history = HistoryRetention(maximumRecords: 100)
        let settings = Settings(inMemoryWith: configuration)
        for index in 0..<500 { try settings.set(index, forKey: "k") }
        while try settings.pruneHistory() > 0 {}
        let error = #expect(throws: SettingsError.self) { try settings.changes(since: 10) }
        #expect(error?.code == .historyCompacted && error?.oldestReplayableSequence == 400)
        #expect(try settings.changes(since: 400).changes.count == 1, "one key: its 100 changes are one group")
        #expect(try settings.changes(since: 400).changes[0].changes.count == 100)

        var off = SettingsConfiguration()
        off.history = .off
        let forgetful = Settings(inMemoryWith: off)
        try forgetful.set(1, forKey: "k")
        let none = #expect(throws: SettingsError.self) { try forgetful.changes(since: 0) }
        #expect(none?.code == .historyCompacted && none?.oldestReplayableSequence == 1)
        #expect(none?.message.contains("the history is off") == true)
    }

    @Test("a secret key is replayed as it is now: its last change with its value, its earlier ones left out")
    func secretsReplayTheirLastValue() throws {
        var configuration = SettingsConfiguration()
        configuration.policy.schema = try .secret("token")
        let settings = Settings(inMemoryWith: configuration)
        try settings.set("one", forKey: "token")
        try settings.set("two", forKey: "token")
        try settings.set(1, forKey: "plain")
        let changes = try settings.changes(since: 0).changes
        #expect(changes.flatMap(\.changes).map(\.key) == ["token", "plain"])
        #expect(changes.flatMap(\.changes).first?.value == "two")
    }

    @Test("a stream resumed while another thread writes delivers every change once, in order, with no gap")
    func resumedStreamWhileWriting() async throws {
        let settings = Settings(inMemoryWith: .init())
        for index in 0..<200 { try settings.set(index, forKey: "before.\(index % 7)") }
        let since = Int64(50)
        let writer = Thread {
            for index in 0..<2_000 { try? settings.set(index, forKey: "during.\(index % 13)") }
        }
        writer.start()
        let stream = try settings.changes(.all, since: since)
        var expected = since + 1
        for try await change in stream {
            // Each commit stores one key: a change of n keys (a replayed group) ends n numbers on.
            #expect(change.sequence - Int64(change.changes.count) + 1 == expected, "no gap, none twice")
            expected = change.sequence + 1
            if change.sequence == 2_200 { break }
        }
        #expect(expected == 2_201)
    }
}

@Suite("Writability: a binding, describe and a client say whether a key is locked, and by what")
struct WritabilityTests {
    @Test(
        "a locked key is not writable and names its lock file; a free one is writable, in the store and through the protocol"
    )
    func lockedKeysSaySo() async throws {
        var configuration = SettingsConfiguration()
        configuration.policy = SettingsPolicy()
        configuration.policy.locks = [SettingsPolicy.Lock(key: "ui.theme", file: "/etc/settingsd/locks.d/ui")]
        let settings = Settings(inMemoryWith: configuration)
        let theme = SettingBinding(SettingKey("ui.theme", default: "light"), in: settings)
        let size = SettingBinding(SettingKey("ui.size", default: 12), in: settings)
        #expect(!theme.isWritable && theme.lockingFile == "/etc/settingsd/locks.d/ui")
        #expect(size.isWritable && size.lockingFile == nil)
        func writable(_ key: String, in reader: some SettingsReading) async throws -> Bool {
            try await reader.isWritable(forKey: key)
        }
        #expect(try await writable("ui.size", in: settings))
        #expect(try await !writable("ui.theme", in: settings))
    }
}
