import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Limits on keys and values", .timeLimit(.minutes(2)))
struct LimitsTests {
    func store(_ limits: SettingsLimits) -> Settings {
        Settings(inMemoryWith: .init(limits: limits))
    }

    @Test("a key at the byte limit is accepted, one byte more is refused")
    func keyBytes() throws {
        let settings = store(.iCloud)
        try settings.set(1, forKey: String(repeating: "k", count: 64))
        let error = #expect(throws: SettingsError.self) {
            try settings.set(1, forKey: String(repeating: "k", count: 65))
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maximumKeyBytes") == true)
        #expect(settings.usage.keys == 1)
    }

    @Test("no configuration lets a key past 16 MiB, the longest the in-memory index holds")
    func absoluteKeyLimit() throws {
        let settings = store(SettingsLimits(maximumKeyBytes: .max, maximumValueBytes: 100))
        let error = #expect(throws: SettingsError.self) {
            try settings.set(1, forKey: String(repeating: "k", count: KeyValidation.absoluteMaximumBytes + 1))
        }
        #expect(error?.code == .limitExceeded)
        #expect(settings.usage.keys == 0)
    }

    @Test("a value at the byte limit is accepted, one byte more is refused")
    func valueBytes() throws {
        let settings = store(SettingsLimits(maximumKeyBytes: 64, maximumValueBytes: 100))
        // A string value takes a tag byte and a one-byte length for up to 127 bytes.
        try settings.set(String(repeating: "v", count: 98), forKey: "fits")
        let error = #expect(throws: SettingsError.self) {
            try settings.set(String(repeating: "v", count: 99), forKey: "big")
        }
        #expect(error?.key == "big")
        #expect(error?.message == "value for 'big' is 101 bytes, over the limit of 100 (maximumValueBytes)")
        #expect(settings["big"] == nil)
    }

    @Test("the key count limit refuses one key more but allows overwrites")
    func keyCount() throws {
        let settings = store(SettingsLimits(maximumKeyBytes: 64, maximumValueBytes: 100, maximumKeyCount: 3))
        for key in ["a", "b", "c"] { try settings.set(1, forKey: key) }
        try settings.set(2, forKey: "c")
        let error = #expect(throws: SettingsError.self) { try settings.set(1, forKey: "d") }
        #expect(error?.message.contains("maximumKeyCount") == true)
        try settings.removeValue(forKey: "a")
        try settings.set(1, forKey: "d")
        #expect(settings.keys() == ["b", "c", "d"])
    }

    @Test("the total byte limit counts keys and values and refuses the write past it")
    func totalBytes() throws {
        // Each entry: 1 key byte + 9 value bytes (an integer) = 10.
        let settings = store(
            SettingsLimits(maximumKeyBytes: 64, maximumValueBytes: 100, maximumTotalBytes: 30))
        for key in ["a", "b", "c"] { try settings.set(1, forKey: key) }
        #expect(settings.usage.bytes == 30)
        let error = #expect(throws: SettingsError.self) { try settings.set(1, forKey: "d") }
        #expect(error?.message.contains("maximumTotalBytes") == true)
        #expect(settings.usage.bytes == 30)
    }

    @Test("a transaction that breaks a limit changes nothing")
    func transactionsAreAllOrNothing() throws {
        let settings = store(SettingsLimits(maximumKeyBytes: 64, maximumValueBytes: 100, maximumKeyCount: 2))
        #expect(throws: SettingsError.self) {
            try settings.transaction { transaction in
                for key in ["a", "b", "c"] { try transaction.set(1, forKey: key) }
            }
        }
        #expect(settings.keys().isEmpty)
        #expect(settings.sequence == 0)
    }

    @Test("the iCloud preset has iCloud's numbers")
    func iCloudPreset() {
        #expect(SettingsLimits.iCloud.maximumKeyBytes == 64)
        #expect(SettingsLimits.iCloud.maximumKeyCount == 1024)
        #expect(SettingsLimits.iCloud.maximumTotalBytes == 1_000_000)
        #expect(SettingsLimits.desktop.maximumValueBytes == 1_048_576)
    }
}
