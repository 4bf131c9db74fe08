import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("History in the library", .timeLimit(.minutes(2)))
struct HistoryTests {
    let directory = TemporaryDirectory()

    @Test("one record per effective change on every local path, none for a no-op, with this process as actor")
    func recordsPerChange() throws {
        let settings = try Settings(path: directory.database)
        try settings.set(0.5, forKey: "audio.volume")
        try settings.set(0.5, forKey: "audio.volume")  // no-op: no record
        try settings.transaction { transaction in
            try transaction.set(0.8, forKey: "audio.volume")
            try transaction.set("dark", forKey: "ui.theme")
        }
        try settings.importValues(["ui.theme": "light"])
        try settings.removeValue(forKey: "audio.volume")
        let records = try settings.history(HistoryQuery())
        #expect(records.map(\.reason) == ["local", "import", "local", "local", "local"])
        #expect(
            records.map(\.key) == ["audio.volume", "ui.theme", "ui.theme", "audio.volume", "audio.volume"])
        let delete = try #require(records.first)
        #expect(delete.isDeletion)
        #expect(delete.previous == 0.8)
        #expect(records.last?.previous == nil)
        #expect(delete.actor == ChangeActor.current)
        #expect(delete.origin == settings.replicaID)
        #expect(settings.historyCount == 5)
        #expect(try settings.history(for: "ui.theme").count == 2)
        #expect(try settings.history(HistoryQuery(keyOrPrefix: "audio.", limit: 2)).count == 2)
    }

    @Test("revert by version and by time, export as of a time, and a peer gets the reverted values")
    func revertAndSnapshot() async throws {
        let clock = SkewedClock()
        let settings = Settings(inMemoryWith: SettingsConfiguration(clock: clock.read))
        let peer = Settings(inMemoryWith: .init())
        let link = InProcessLink(settings, peer)
        defer { link.disconnect() }
        try settings.set("first", forKey: "ui.theme")
        try settings.set(1, forKey: "ui.size")
        let first = try #require(settings.entry(forKey: "ui.theme")).version
        clock.jump(by: 10_000)
        let middle = clock.now()
        clock.jump(by: 10_000)
        try settings.set("second", forKey: "ui.theme")
        try settings.set(2, forKey: "ui.size")
        try settings.set(true, forKey: "ui.new")
        #expect(try settings.snapshot(at: middle) == ["ui.theme": "first", "ui.size": 1])
        try settings.revert("ui.theme", to: first)
        #expect(settings.value(forKey: "ui.theme") == "first")
        #expect(try settings.history(for: "ui.theme", limit: 1).first?.reason == "revert")
        try settings.revert("ui.", before: middle)
        #expect(settings.snapshot() == ["ui.theme": "first", "ui.size": 1])
        try await waitForConvergence([settings, peer])
        #expect(peer.snapshot() == ["ui.theme": "first", "ui.size": 1])
        let error = #expect(throws: SettingsError.self) {
            try settings.revert("ui.theme", to: SettingVersion(timestamp: .zero, replica: settings.replicaID))
        }
        #expect(error?.code == .invalidValue)
    }

    @Test("replicated changes are recorded with their origin; history is not synced")
    func replicatedRecords() async throws {
        let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
        let link = InProcessLink(a, b)
        defer { link.disconnect() }
        try a.set(1, forKey: "k")
        try await waitForConvergence([a, b])
        let record = try #require(try b.history(for: "k").first)
        #expect(record.reason == "initialSync" || record.reason == "replica")
        #expect(record.origin == a.replicaID)
        #expect(record.actor == nil)
        #expect(b.historyCount == 1)
    }

    @Test("retention: old records and records beyond the maximum are pruned in batches while writes go on")
    func retention() async throws {
        let clock = SkewedClock()
        var configuration = SettingsConfiguration(clock: clock.read)
        configuration.history = HistoryRetention(keep: .milliseconds(60_000), maximumRecords: 300)
        let settings = try Settings(path: directory.database, configuration: configuration)
        for index in 0..<200 { try settings.set(index, forKey: "old.\(index % 20)") }
        clock.jump(by: 120_000)
        let writers = ThreadGroup()
        writers.run {
            for index in 0..<400 { try? settings.set(index, forKey: "new.\(index % 40)") }
        }
        var pruned = 0
        while true {
            let removed = try settings.pruneHistory(batch: 50)
            pruned += removed
            if removed == 0 { break }
        }
        await writers.wait()
        while try settings.pruneHistory(batch: 50) > 0 {}
        #expect(pruned >= 200)
        #expect(settings.historyCount <= 300)
        #expect(try settings.history(HistoryQuery(keyOrPrefix: "old.", limit: 1000)).isEmpty)
        #expect(try settings.history(HistoryQuery(keyOrPrefix: "new.", limit: 1)).first?.value == 399)
        var off = SettingsConfiguration()
        off.history = .off
        let quiet = Settings(inMemoryWith: off)
        try quiet.set(1, forKey: "k")
        #expect(quiet.historyCount == 0)
    }

    @Test("a secret key's values are recorded as fingerprints only")
    func secretKeys() throws {
        var configuration = SettingsConfiguration()
        configuration.policy.schema = try .secret("account.token")
        let settings = Settings(inMemoryWith: configuration)
        try settings.set("hunter2", forKey: "account.token")
        let record = try #require(try settings.history(for: "account.token").first)
        #expect(record.isRedacted)
        guard case .string(let text)? = record.value else {
            Issue.record("no fingerprint")
            return
        }
        #expect(text.hasPrefix("fingerprint:"))
        #expect(!text.contains("hunter2"))
    }
}
