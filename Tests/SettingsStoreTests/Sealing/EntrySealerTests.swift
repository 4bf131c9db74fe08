import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

@Suite("Sealing: an entry sealed for a target opens only as it was sealed")
struct EntrySealerTests {
    static let target = Array(repeating: UInt8(1), count: 16)

    static func entry(_ key: String, _ value: SettingValue?, at milliseconds: UInt64 = 1_800_000_000_000)
        -> SettingEntry
    {
        SettingEntry(
            key: key, value: value,
            version: SettingVersion(
                timestamp: HybridTimestamp(milliseconds: milliseconds, counter: 2),
                replica: ReplicaID.random()),
            sequence: 7)
    }

    static func open(_ sealer: EntrySealer, _ keyID: String, _ sealed: [UInt8], _ version: SettingVersion)
        -> Result<SettingEntry, SealRefusal>
    {
        sealed.withUnsafeBytes { sealer.open(keyID: keyID, sealed: $0, version: version, sequence: 3) }
    }

    @Test(
        "values and deletions open to what was sealed; the same entry seals to the same bytes; no name shows")
    func roundTrip() throws {
        let sealer = EntrySealer(key: .random(), target: Self.target)
        for entry in [
            Self.entry("ui.theme.marker-Qx81", .string("dark-marker-Zp44")), Self.entry("gone", nil),
            Self.entry("k", .dictionary(["a": .array([.integer(1), .bool(true)])])),
        ] {
            let (keyID, sealed) = sealer.seal(entry)
            #expect(EntrySealer.isKeyID(keyID))
            #expect(sealer.seal(entry).sealed == sealed, "deterministic: both sides fingerprint the same row")
            let text = String(decoding: sealed, as: UTF8.self)
            #expect(!text.contains("marker"))
            let opened = try Self.open(sealer, keyID, sealed, entry.version).get()
            #expect(opened.key == entry.key && opened.value == entry.value && opened.version == entry.version)
            #expect(opened.sequence == 3)
        }
    }

    @Test("a flipped byte, another key id, another version, another target or another key is refused")
    func tampering() throws {
        let key = SyncKey.random()
        let sealer = EntrySealer(key: key, target: Self.target)
        let entry = Self.entry("proxy.password", .string("hunter2"))
        let other = Self.entry("ui.theme", .string("dark"))
        let (keyID, sealed) = sealer.seal(entry)
        for index in [0, 1, 12, 40, sealed.count - 1] {
            var flipped = sealed
            flipped[index] ^= 0x40
            guard case .failure = Self.open(sealer, keyID, flipped, entry.version) else {
                Issue.record("a flip at byte \(index) opened")
                continue
            }
        }
        #expect(
            Self.open(sealer, sealer.keyID(for: other.key), sealed, entry.version) == .failure(.doesNotVerify)
        )
        let replayed = SettingVersion(
            timestamp: HybridTimestamp(milliseconds: 1_900_000_000_000, counter: 0),
            replica: entry.version.replica)
        #expect(Self.open(sealer, keyID, sealed, replayed) == .failure(.doesNotVerify))
        let elsewhere = EntrySealer(key: key, target: Array(repeating: 2, count: 16))
        #expect(Self.open(elsewhere, keyID, sealed, entry.version) == .failure(.doesNotVerify))
        let stranger = EntrySealer(key: .random(), target: Self.target)
        #expect(Self.open(stranger, keyID, sealed, entry.version) == .failure(.unknownKey(key.id)))
        #expect(Self.open(sealer, keyID, Array(sealed.prefix(20)), entry.version) != .success(entry))
        #expect(Self.open(sealer, "not-a-key-id", sealed, entry.version) != .success(entry))
    }

    @Test("after a rotation, rows of the old key still open, new rows name the new key, key ids stay")
    func rotation() throws {
        let old = SyncKeyring(current: .random())
        let new = old.rotated()
        #expect(new.current.sharesNaming(with: old.current) && new.keyID != old.keyID)
        let entry = Self.entry("a", .integer(1))
        let (oldID, oldSealed) = old.sealer(for: Self.target).seal(entry)
        let sealer = new.sealer(for: Self.target)
        let (newID, newSealed) = sealer.seal(entry)
        #expect(oldID == newID)
        #expect(oldSealed != newSealed)
        #expect(try Self.open(sealer, oldID, oldSealed, entry.version).get().value == .integer(1))
        // Another machine imports the rotated key: it keeps the old one to open older rows.
        #expect(old.importing(new.current).previous.map(\.id) == [old.keyID])
        #expect(old.importing(.random()).previous.isEmpty, "another key altogether replaces the keyring")
    }

    @Test("a seal record verifies under its key only, and a target sealed otherwise is refused by name")
    func sealDecision() throws {
        let keyring = SyncKeyring(current: .random())
        let sealer = keyring.sealer(for: Self.target)
        let record = SealRecord(sealer: sealer)
        let read = try SealRecord.read(record.encoded(), from: "a test")
        #expect(read == record && read.verifies(with: sealer))
        guard
            case .sealed(_, publishes: false) = try Sealing.decide(
                record: record, keyring: keyring, marksPlain: false, target: Self.target, place: "t")
        else { throw SettingsError(.invalidValue, "a record of the key is joined as it is") }
        guard
            case .sealed(_, publishes: true) = try Sealing.decide(
                record: nil, keyring: keyring, marksPlain: false, target: Self.target, place: "t")
        else { throw SettingsError(.invalidValue, "a plain target is sealed") }
        guard
            case .sealed(_, publishes: true) = try Sealing.decide(
                record: record, keyring: keyring.rotated(), marksPlain: false, target: Self.target, place: "t"
            )
        else { throw SettingsError(.invalidValue, "a rotated key re-seals") }
        #expect(
            throws: SettingsError.self,
            performing: {
                try Sealing.decide(
                    record: record, keyring: SyncKeyring(current: .random()), marksPlain: false,
                    target: Self.target,
                    place: "t")
            })
        #expect(
            throws: SettingsError.self,
            performing: {
                try Sealing.decide(
                    record: record, keyring: nil, marksPlain: false, target: Self.target, place: "t")
            })
        #expect(
            throws: SettingsError.self,
            performing: {
                try Sealing.decide(
                    record: record, keyring: keyring, marksPlain: true, target: Self.target, place: "t")
            })
        // A record whose tag was altered is refused, not taken as another seal.
        let encoded = String(decoding: record.encoded(), as: UTF8.self)
        let tagStart = try #require(encoded.range(of: "\"tag\":\"")).upperBound
        let forged = encoded.replacingCharacters(
            in: tagStart..<encoded.index(tagStart, offsetBy: 8), with: "00000000")
        let tampered = try SealRecord.read(Array(forged.utf8), from: "a test")
        #expect(!tampered.verifies(with: sealer))
        #expect(
            throws: SettingsError.self,
            performing: {
                try Sealing.decide(
                    record: tampered, keyring: keyring, marksPlain: false, target: Self.target, place: "t")
            })
        guard
            case .plain = try Sealing.decide(
                record: nil, keyring: nil, marksPlain: false, target: Self.target, place: "t")
        else { throw SettingsError(.invalidValue, "no key, no record: plain") }
    }

    @Test("the key file is written 0600 and refused when others may read it")
    func keyFile() throws {
        let directory = TemporaryDirectory()
        let file = SyncKeyFile(path: directory.path + "/settingsd/sync-key")
        #expect(try file.load() == nil)
        let keyring = SyncKeyring(current: .random()).rotated()
        try file.save(keyring)
        #expect(try file.load() == keyring)
        #expect(chmod(file.path, 0o644) == 0)
        #expect(throws: SettingsError.self) { try file.load() }
    }
}
