import Foundation

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Polls `condition` every few milliseconds until it holds, failing after `timeout` seconds.
/// The default is generous because it returns as soon as the condition holds: the first full
/// run on a fresh 2-core machine (PostgreSQL, dconf and D-Bus all starting) has stalled a
/// dconf-through-the-hub trip past 10 s.
/// The error names the caller's line, so a failure says which wait it was.
func waitUntil(
    timeout: Double = 30, fileID: StaticString = #fileID, line: UInt = #line, _ condition: () throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else {
            throw SettingsError(.timeout, "condition at \(fileID):\(line) not met in \(timeout) s")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
