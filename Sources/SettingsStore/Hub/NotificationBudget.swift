/// How many rounds hub notifications may start: a token bucket holding
/// `HubConnector.notificationBurst` rounds, refilled at one per `notificationInterval`. Changes
/// that arrive no faster than that are pulled at once; a flood costs one round per interval.
struct NotificationBudget {
    private var tokens = HubConnector.notificationBurst
    private var refilled: UInt64?

    /// Takes one round at `now` (milliseconds) and returns how long to wait for it, in seconds
    /// (0 while the budget lasts).
    mutating func spend(now: UInt64) -> Double {
        let interval = HubConnector.notificationInterval
        if let refilled {
            let elapsed = Double(now &- refilled) / 1000
            tokens = min(HubConnector.notificationBurst, tokens + elapsed / interval)
        }
        refilled = now
        tokens -= 1
        guard tokens < 0 else { return 0 }
        // Owed: the wait until the bucket is back at zero, when the round is paid for.
        return -tokens * interval
    }
}
