import Foundation
import Testing

@testable import SettingsStore

@Suite("Export and revert as of a time refuse what the history cannot answer")
struct HistoryLimitsTests {
    let directory = TemporaryDirectory()

    private func store(history: HistoryRetention = HistoryRetention(), secret: String? = nil) throws
        -> Settings
    {
        var configuration = SettingsConfiguration()
        configuration.history = history
        if let secret { configuration.policy.schema = try .secret(secret) }
        return Settings(inMemoryWith: configuration)
    }

    @Test("with the history off, the store as of any time is refused (it returned the current store)")
    func historyOff() throws {
        let settings = try store(history: .off)
        try settings.set("now", forKey: "k")
        #expect(throws: SettingsError.self) { try settings.snapshot(at: 0) }
        #expect(throws: SettingsError.self) { try settings.revert("k", before: 0) }
        #expect(settings.value(forKey: "k") == "now")
    }

    @Test("a time older than the history keeps is refused")
    func olderThanKept() throws {
        let settings = try store(
            history: HistoryRetention(keepMilliseconds: 3_600_000, maximumRecords: 1_000))
        try settings.set("now", forKey: "k")
        let twoHoursAgo = SettingsConfiguration.systemClock() - 7_200_000
        do {
            _ = try settings.snapshot(at: twoHoursAgo)
            Issue.record("a snapshot beyond the history was given")
        } catch {
            #expect(error.message.contains("older than the history keeps"), "\(error.message)")
        }
        #expect(try settings.snapshot(at: SettingsConfiguration.systemClock() - 60_000).isEmpty)
    }

    @Test("secret keys changed since then are named, and nothing is reverted (they were silently skipped)")
    func secretsNamed() throws {
        let settings = try store(secret: "account.pin")
        let before = SettingsConfiguration.systemClock()
        usleep(2_000)
        try settings.set("1234", forKey: "account.pin")
        try settings.set("dark", forKey: "account.theme")
        for attempt in [
            { _ = try settings.snapshot(at: before) },
            { _ = try settings.revert("account.", before: before) },
        ] {
            do {
                try attempt()
                Issue.record("a secret key's past value was made up")
            } catch let error as SettingsError {
                #expect(error.message.contains("'account.pin'"), "\(error.message)")
            }
        }
        #expect(settings.value(forKey: "account.theme") == "dark")
        // Without secrets in the way, the same time answers.
        #expect(try settings.revert("account.theme", before: before) == 1)
        #expect(settings.value(forKey: "account.theme") == nil)
    }
}
