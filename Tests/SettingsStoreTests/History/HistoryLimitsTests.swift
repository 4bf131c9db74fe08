import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

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

    @Test(
        "a time before the oldest record a full history kept (--history-max) is refused; after it, answered")
    func olderThanCountKept() throws {
        let clock = SkewedClock()
        var configuration = SettingsConfiguration(clock: clock.read)
        configuration.history = HistoryRetention(maximumRecords: 3)
        let settings = Settings(inMemoryWith: configuration)
        var times: [UInt64] = []
        // Each time is read after its round's write: real time passes between the two (a loaded
        // machine took more than a millisecond), and the history answers as of the time given.
        for round in 0..<6 {
            try settings.set(round, forKey: "k\(round % 2)")
            times.append(clock.now())
            clock.jump(by: 1_000)
        }
        while try settings.pruneHistory() > 0 {}
        #expect(settings.historyCount == 3)
        // The first changes are gone: what the store held then cannot be told.
        let error = #expect(throws: SettingsError.self) { try settings.snapshot(at: times[1]) }
        #expect(error?.message.contains("--history-max") == true, "\(error?.message ?? "")")
        #expect(throws: SettingsError.self) { try settings.revert("k0", before: times[0]) }
        // From the oldest kept record on, the history answers exactly.
        #expect(try settings.snapshot(at: times[4]) == ["k0": 4, "k1": 3])
        #expect(settings.value(forKey: "k0") == 4)
    }

    @Test("a time older than the history keeps is refused")
    func olderThanKept() throws {
        let settings = try store(
            history: HistoryRetention(keep: .milliseconds(3_600_000), maximumRecords: 1_000))
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
