import Testing

@testable import SettingsStore

@Suite("Hub notification budget: changes at a person's pace at once, a flood one round per interval")
struct NotificationBudgetTests {
    @Test("a burst is free, then rounds are spaced by the interval; a quiet spell refills the budget")
    func tokenBucket() {
        var budget = NotificationBudget()
        let burst = Int(HubConnector.notificationBurst)
        let interval = HubConnector.notificationInterval
        var now: UInt64 = 1_000_000
        for _ in 0..<burst { #expect(budget.spend(now: now) == 0) }
        let wait = budget.spend(now: now)
        #expect(abs(wait - interval) < 1e-9)
        // A flood: each round waits one interval, never more.
        for _ in 0..<20 {
            now += UInt64(wait * 1000)
            #expect(abs(budget.spend(now: now) - interval) < 1e-6)
        }
        // Changes a little slower than one per interval never wait.
        now += 1_000
        for _ in 0..<100 {
            now += UInt64(interval * 1000) + 10
            #expect(budget.spend(now: now) == 0)
        }
    }
}
