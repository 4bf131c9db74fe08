import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite(
    "Key identity: one key per Unicode normal form, in memory, on disk and in prefixes",
    .timeLimit(.minutes(2)))
struct KeyIdentityTests {
    let directory = TemporaryDirectory()
    let composed = "caf\u{E9}"  // NFC
    let decomposed = "cafe\u{301}"  // NFD: the same key

    @Test("NFC and NFD spellings are one key that survives reopening with the last value")
    func twinsAreOneKey() throws {
        do {
            let settings = try Settings(path: directory.database)
            try settings.set("first", forKey: composed)
            try settings.set("second", forKey: decomposed)
            #expect(settings.keys() == [composed])
            settings.close()
        }
        let reopened = try Settings(path: directory.database)
        #expect(reopened.value(forKey: composed) == "second")
        #expect(reopened.keys().map { Array($0.utf8) } == [Array(composed.utf8)])
        try reopened.removeValue(forKey: decomposed)
        reopened.close()
        let again = try Settings(path: directory.database)
        #expect(again.value(forKey: composed) == nil)
        #expect(try rows(in: directory.database) == 1)  // the tombstone, under the NFC key
    }

    @Test("prefixes match by the bytes of the normal forms, for list and watch alike")
    func prefixesMatchNormalForms() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(1, forKey: "\(decomposed).size")
        try settings.set(2, forKey: "cafeteria")
        #expect(settings.keys(withPrefix: "\(composed).") == ["\(composed).size"])
        #expect(settings.keys(withPrefix: "cafe") == ["cafeteria"])
        #expect(ChangeFilter.prefixes(["\(decomposed)."]).matches("\(composed).size"))
        #expect(!ChangeFilter.prefixes(["cafe"]).matches("\(composed).size"))
    }

    @Test("a file written before keys had one identity is repaired on open: the newest twin wins")
    func legacyTwinsAreMerged() throws {
        do {
            let settings = try Settings(path: directory.database)
            try settings.set("old", forKey: composed)
            try settings.set("newer", forKey: "other")
            settings.close()
        }
        // An old build stored the NFD spelling as a second row, with a higher version.
        try sqlite(
            directory.database,
            "INSERT INTO entries (key, value, hlc, replica, seq) SELECT '\(decomposed)', value, hlc + 1, replica, seq + 1 FROM entries WHERE key = 'other'"
        )
        #expect(try rows(in: directory.database) == 3)
        let settings = try Settings(path: directory.database)
        #expect(settings.value(forKey: composed) == "newer")
        #expect(settings.keys().count == 2)
        settings.close()
        #expect(try rows(in: directory.database) == 2)
    }

    private func rows(in database: String) throws -> Int {
        Int(
            try sqlite(database, "SELECT count(*) FROM entries").trimmingCharacters(
                in: .whitespacesAndNewlines))
            ?? -1
    }

    @discardableResult
    private func sqlite(_ database: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database, sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
    }
}
