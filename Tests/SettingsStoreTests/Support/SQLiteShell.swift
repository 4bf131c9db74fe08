import Foundation

@testable import SettingsStore

/// Runs SQL on a database file with the sqlite3 shell, as a bug or an administrator might.
func runSQLite(_ path: String, _ sql: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SettingsError(.io, "sqlite3 failed on '\(path)' with status \(process.terminationStatus)")
    }
}
