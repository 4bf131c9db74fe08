import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Secret keys' fingerprints: keyed per store, not reversible from the history alone")
struct SecretFingerprintTests {
    let directory = TemporaryDirectory()

    /// The reference key of the SipHash paper: bytes 00 … 0f.
    private let referenceKey = FingerprintKey(k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908)

    @Test("the keyed hash is SipHash-2-4: the paper's reference vectors")
    func referenceVectors() {
        #expect(referenceKey.hash([]) == 0x726f_db47_dd0e_0e31)
        #expect(referenceKey.hash(Array(0..<15)) == 0xa129_ca61_49be_45e5)
        #expect(referenceKey.hash(Array(0..<8)) == 0x93f5_f579_9a93_2462)
    }

    private func fingerprints(_ settings: Settings, _ key: String) throws -> [String] {
        try settings.history(for: key).compactMap { record in
            if case .string(let text)? = record.value { text } else { nil }
        }
    }

    private func secretStore(_ path: String) throws -> Settings {
        var configuration = SettingsConfiguration()
        configuration.policy.schema = try .secret("account.pin")
        return try Settings(path: path, configuration: configuration)
    }

    @Test("equal secrets have unrelated fingerprints in every record, across reopening, and in other stores")
    func keyedPerRecord() throws {
        let path = directory.file("a.sqlite")
        var first = try secretStore(path)
        try first.set("4821", forKey: "account.pin")
        try first.set("0000", forKey: "account.pin")
        try first.set("4821", forKey: "account.pin")
        let printed = try fingerprints(first, "account.pin")
        #expect(printed.count == 3)
        #expect(Set(printed).count == 3)
        first.close()
        first = try secretStore(path)
        try first.set("0000", forKey: "account.pin")
        #expect(try !printed.contains(#require(try fingerprints(first, "account.pin").first)))
        let other = try secretStore(directory.file("b.sqlite"))
        try other.set("4821", forKey: "account.pin")
        #expect(try fingerprints(other, "account.pin").first != printed[0])
    }

    @Test(
        "whoever can write the key cannot find an old PIN by writing every guess and comparing fingerprints")
    func noOracleByWriting() throws {
        let settings = try secretStore(directory.file("oracle.sqlite"))
        try settings.set("4821", forKey: "account.pin")
        let secret = try #require(try fingerprints(settings, "account.pin").first)
        for pin in 0..<10_000 {
            try settings.set(
                String(repeating: "0", count: 4 - String(pin).count) + String(pin), forKey: "account.pin")
        }
        let all = try settings.history(for: "account.pin", limit: 20_000).compactMap { record in
            if case .string(let text)? = record.value { text } else { nil }
        }
        #expect(all.count == 10_001)
        #expect(all.filter { $0 == secret }.count == 1, "a guess's fingerprint matched the old PIN's")
    }

    @Test("a loop over every four-digit PIN with the old unkeyed hash finds nothing in the history")
    func notReversibleByDictionary() throws {
        let settings = try secretStore(directory.file("pin.sqlite"))
        try settings.set("4821", forKey: "account.pin")
        let recorded = try #require(try fingerprints(settings, "account.pin").first)
        for pin in 0..<10_000 {
            let guess = SettingValue.string(
                String(repeating: "0", count: 4 - String(pin).count) + String(pin))
            var unkeyed = Fingerprint()
            unkeyed.mix(value: guess)
            #expect(recorded != "fingerprint:" + String(unkeyed.value, radix: 16))
        }
    }
}
