import Foundation

@testable import SettingsStore

/// Polls `condition` every few milliseconds until it holds, failing after `timeout` seconds.
/// The default is generous because it returns as soon as the condition holds: the first full
/// run on a fresh 2-core machine (PostgreSQL, dconf and D-Bus all starting) has stalled a
/// dconf-through-the-hub trip past 10 s.
func waitUntil(timeout: Double = 30, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw SettingsError(.timeout, "condition not met in \(timeout) s") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
