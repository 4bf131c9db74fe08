import Foundation

@testable import SettingsStore

/// Polls `condition` every few milliseconds until it holds, failing after `timeout` seconds.
func waitUntil(timeout: Double = 10, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw SettingsError(.timeout, "condition not met in \(timeout) s") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
