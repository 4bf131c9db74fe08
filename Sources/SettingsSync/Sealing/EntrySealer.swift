package import SettingsStore

/// Seals the entries a replica sends to one sealed target (a hub namespace, a synced folder)
/// and opens what it reads there. The target sees an opaque key id per key, the sealed bytes'
/// size, the version and replica ids; never a key name or a value (docs/SYNC.md, "End-to-end
/// encryption").
///
/// A sealed entry, in bytes:
///
/// | bytes | what |
/// | --- | --- |
/// | 1 | format, 1 |
/// | 8 | the id of the key that sealed it (`SyncKey.id`) |
/// | 24 | the nonce |
/// | n + 16 | XChaCha20-Poly1305 of the plaintext, then its tag |
///
/// The plaintext is a kind byte (0 deleted, 1 a value), the key name's length (2 bytes) and
/// UTF-8, then the value's binary encoding; its key id is computed from the name when sealed. The authenticated data binds the target, the key id,
/// the version (stamp and replica) and the sealing key's id, so a row moved to another key,
/// replayed at another version or copied into another target fails to open.
///
/// Sealing is deterministic: the nonce is a keyed BLAKE2b of the authenticated data and the
/// plaintext (a synthetic nonce), so one entry always seals to the same bytes and both sides of
/// an anti-entropy comparison compute the same fingerprint. Two different plaintexts never share
/// a nonce (192 bits), and equal bytes reveal only that a row was written again unchanged.
package struct EntrySealer: Sendable {
    /// The key entries are sealed with.
    package let key: SyncKey
    /// Older keys (before rotations): rows sealed under them still open.
    package let previous: [SyncKey]
    /// The target's 16-byte id, bound into every key id and seal.
    let target: [UInt8]

    private let current: Secrets
    private let readable: [Secrets]

    /// One key's derived secrets.
    private struct Secrets: Sendable {
        let id: [UInt8]
        let entry: [UInt8]
        let nonce: [UInt8]
        let mask: [UInt8]

        init(_ key: SyncKey) {
            id = key.idBytes
            entry = Sodium.subkey(1, of: key.sealing, context: "sdseal01")
            nonce = Sodium.subkey(2, of: key.sealing, context: "sdseal01")
            mask = Sodium.subkey(3, of: key.sealing, context: "sdseal01")
        }
    }

    /// The format byte of a sealed entry.
    static let format: UInt8 = 1
    /// What sealing adds to an entry's key name and value: format, key id, nonce, tag, kind and
    /// the name's length.
    package static let overhead = 1 + 8 + Sodium.nonceBytes + Sodium.tagBytes + 3

    /// A sealer for the target `target` (16 bytes), sealing with `key`, opening rows of `previous`
    /// keys too.
    package init(key: SyncKey, previous: [SyncKey] = [], target: [UInt8]) {
        precondition(target.count == 16, "a seal target is 16 bytes")
        self.key = key
        self.previous = previous
        self.target = target
        current = Secrets(key)
        readable = [current] + previous.map(Secrets.init)
    }

    /// The opaque id the target sees for the key `name`: 32 hexadecimal digits of a BLAKE2b keyed
    /// with the naming secret, over the target and the name.
    package func keyID(for name: String) -> String {
        Hex.string(keyIDBytes(for: name))
    }

    private func keyIDBytes(for name: String) -> [UInt8] {
        var message: [UInt8] = Array("settingsd key id\u{0}".utf8)
        message += target
        message += name.utf8
        return Sodium.hash(message, key: key.naming, length: 16)
    }

    /// Whether `text` has the form of a key id (32 lowercase hexadecimal digits).
    package static func isKeyID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// `entry` sealed: its key id and the sealed bytes (a deleted entry is sealed too, so the
    /// target cannot tell a deletion from a value by anything but size).
    package func seal(_ entry: SettingEntry) -> (keyID: String, sealed: [UInt8]) {
        let id = keyIDBytes(for: entry.key)
        let name = Array(entry.key.utf8)
        var plaintext: [UInt8] = []
        let value = entry.value?.encoded() ?? []
        plaintext.reserveCapacity(3 + name.count + value.count)
        plaintext.append(entry.value == nil ? 0 : 1)
        plaintext.append(UInt8(truncatingIfNeeded: name.count >> 8))
        plaintext.append(UInt8(truncatingIfNeeded: name.count))
        plaintext += name
        plaintext += value
        let data = authenticatedData(keyID: id, version: entry.version, keyIdentity: current.id)
        var message = data
        message.reserveCapacity(data.count + plaintext.count)
        message += plaintext
        let nonce = Sodium.hash(message, key: current.nonce, length: Sodium.nonceBytes)
        var sealed: [UInt8] = [Self.format]
        sealed.reserveCapacity(Self.overhead + name.count + value.count)
        sealed += current.id
        sealed += nonce
        sealed += Sodium.seal(plaintext, data: data, nonce: nonce, key: current.entry)
        return (Hex.string(id), sealed)
    }

    /// Opens a row read from the target: its key id, sealed bytes and version. Returns the entry
    /// (with `sequence`), or why it is refused.
    package func open(
        keyID: String, sealed: UnsafeRawBufferPointer, version: SettingVersion, sequence: Int64
    ) -> Result<SettingEntry, SealRefusal> {
        guard sealed.count >= Self.overhead, sealed[0] == Self.format else {
            return .failure(.malformed("it is not a sealed entry (\(sealed.count) bytes)"))
        }
        guard Self.isKeyID(keyID), let id = Hex.bytes(keyID) else {
            return .failure(.malformed("its key id is not one"))
        }
        let keyIdentity = UnsafeRawBufferPointer(rebasing: sealed[1..<9])
        guard let secrets = readable.first(where: { $0.id.elementsEqual(keyIdentity) }) else {
            return .failure(.unknownKey(Hex.string(keyIdentity)))
        }
        let data = authenticatedData(keyID: id, version: version, keyIdentity: secrets.id)
        guard
            let plaintext = Sodium.open(
                UnsafeRawBufferPointer(rebasing: sealed[(9 + Sodium.nonceBytes)...]), data: data,
                nonce: UnsafeRawBufferPointer(rebasing: sealed[9..<(9 + Sodium.nonceBytes)]),
                key: secrets.entry)
        else { return .failure(.doesNotVerify) }
        // The key id and the name inside are authenticated together: only a holder of the key
        // could seal a name under another name's id, so the name is not hashed again here.
        guard plaintext.count >= 3, plaintext[0] <= 1 else {
            return .failure(.malformed("its plaintext is malformed"))
        }
        let length = Int(plaintext[1]) << 8 | Int(plaintext[2])
        guard 3 + length <= plaintext.count,
            let name = String(validating: plaintext[3..<(3 + length)], as: UTF8.self)
        else { return .failure(.malformed("its key name is malformed")) }
        guard plaintext[0] == 1 else {
            return .success(SettingEntry(key: name, value: nil, version: version, sequence: sequence))
        }
        let value = plaintext[(3 + length)...].withUnsafeBytes { try? SettingValue(decoding: $0) }
        guard let value else { return .failure(.malformed("the value of '\(name)' cannot be read")) }
        return .success(SettingEntry(key: name, value: value, version: version, sequence: sequence))
    }

    /// A digest as a sealed target may see it: a keyed BLAKE2b of it, so that equal digests stay
    /// equal and nothing else of them shows.
    package func masked(_ digest: UInt64) -> UInt64 {
        let bytes = withUnsafeBytes(of: digest.bigEndian) { Array($0) }
        return Sodium.hash(bytes, key: current.mask, length: 16).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A keyed BLAKE2b tag of `message` under the current key, for seal records.
    func tag(_ message: [UInt8]) -> [UInt8] {
        Sodium.hash(
            Array("settingsd seal record\u{0}".utf8) + target + message, key: current.mask, length: 16)
    }

    private static let dataLabel = Array("settingsd sealed entry 1\u{0}".utf8)

    private func authenticatedData(keyID: [UInt8], version: SettingVersion, keyIdentity: [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(Self.dataLabel.count + 64)
        data += Self.dataLabel
        data += target
        data += keyID
        withUnsafeBytes(of: version.timestamp.rawValue.bigEndian) { data += $0 }
        data += version.replica.bytes
        data += keyIdentity
        return data
    }
}

/// Why a sealed row was refused; `description` reads as the end of "refused a row: …".
package enum SealRefusal: Error, Equatable, CustomStringConvertible {
    /// Not in the sealed format (cut, altered outside the ciphertext, plaintext in a sealed target).
    case malformed(String)
    /// Sealed under a key this machine does not hold (its id).
    case unknownKey(String)
    /// The tag does not verify: a byte was changed, or the row was moved to another key, replayed
    /// at another version, or copied from another target.
    case doesNotVerify

    package var description: String {
        switch self {
        case .malformed(let why): why
        case .unknownKey(let id): "it is sealed under key \(id), which this machine does not hold"
        case .doesNotVerify:
            "its seal does not verify: altered, moved to another key, replayed at another version, or sealed for another namespace or folder"
        }
    }
}
