import Foundation

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

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

/// The output of `sql` run on a database file by the sqlite3 shell, trimmed: how another
/// process sees the file.
func querySQLite(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SettingsError(.io, "sqlite3 failed on '\(path)' with status \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
