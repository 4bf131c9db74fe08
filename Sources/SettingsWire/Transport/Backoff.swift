import SettingsStore

/// How long to wait before reconnecting: 0.1 s after the first failure, doubling after each
/// further one up to 5 s, and back to the start once a connection works. Every reconnecting part
/// (replica links, hub links, clients) waits by this one rule.
package struct Backoff: Sendable, Equatable {
    /// The first wait.
    static let minimumSeconds = 0.1
    /// The longest wait.
    static let maximumSeconds = 5.0

    /// The wait before the next attempt.
    private(set) var seconds = Backoff.minimumSeconds

    /// A backoff at its first wait.
    package init() {}

    /// The wait before the next attempt; the one after it is doubled, up to the maximum.
    package mutating func next() -> Double {
        defer { seconds = min(max(seconds * 2, Self.minimumSeconds), Self.maximumSeconds) }
        return seconds
    }

    /// A connection worked: the next failure waits the minimum again.
    package mutating func reset() {
        seconds = Self.minimumSeconds
    }

    /// The next attempt goes at once (this replica just took a new id, nothing is wrong).
    package mutating func retryAtOnce() {
        seconds = 0
    }
}
