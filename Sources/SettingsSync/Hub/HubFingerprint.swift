import SettingsStore
import SettingsWire

/// The fingerprint PostgreSQL computes for each hub row (`settingsd.fingerprint`, a generated
/// column, so hand edits change it too), computed here for local entries: the first 8 bytes,
/// big-endian, of the MD5 of the key's UTF-8, a zero byte, the stamp (8 bytes, big-endian), the
/// replica id (16 bytes), then `0x00` for a tombstone or `0x01` and the value's binary encoding.
///
/// MD5 because PostgreSQL has it built in and it is fast; it only has to tell rows apart, not
/// resist anyone: a tenant can write any row it likes anyway.
enum HubFingerprint {
    /// The fingerprint of `entry` as the hub's generated column holds it: of the entry as it is,
    /// or of its sealed row when `sealer` seals what goes to the hub.
    static func of(_ entry: SettingEntry, sealedBy sealer: EntrySealer? = nil) -> UInt64 {
        if let sealer {
            let (keyID, sealed) = sealer.seal(entry)
            return of(key: keyID, version: entry.version, value: sealed)
        }
        return of(key: entry.key, version: entry.version, value: entry.value?.encoded())
    }

    /// The fingerprint of a row of `key`, `version` and `value` bytes (nil: a tombstone).
    static func of(key: String, version: SettingVersion, value: [UInt8]?) -> UInt64 {
        let encoded = value ?? []
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count + 26 + encoded.count)
        bytes.append(contentsOf: key.utf8)
        bytes.append(0)
        withUnsafeBytes(of: version.timestamp.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: version.replica.uuid.uuid) { bytes.append(contentsOf: $0) }
        bytes.append(value == nil ? 0 : 1)
        bytes.append(contentsOf: encoded)
        return bytes.withUnsafeBytes { MD5.prefix64($0) }
    }

    /// The bucket (0 to 4095) of a hub fingerprint: its top 12 bits, as the hub groups them.
    static func bucket(of fingerprint: UInt64) -> Int {
        Int(fingerprint >> 52)
    }
}
