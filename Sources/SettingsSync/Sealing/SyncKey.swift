package import SettingsStore

/// The key a user's replicas seal their entries with before they leave the machine for a hub
/// or a synced folder: two 32-byte secrets, never sent anywhere in the clear.
///
/// - `naming` turns key names into the opaque key ids the hub and the folder see. It never
///   changes, so a key's id stays the same across rotations and a rotation re-seals rows in place.
/// - `sealing` seals entries (XChaCha20-Poly1305). `keys rotate` replaces it.
///
/// The key's public `id` (16 hexadecimal digits, a BLAKE2b of both) names it in seal records,
/// sealed rows and `status`, and says nothing of the secrets.
package struct SyncKey: Sendable, Equatable {
    package let naming: [UInt8]
    package let sealing: [UInt8]

    /// How a key derived from a passphrase was derived (nil: made at random).
    package var derivation: Derivation?

    /// Argon2id's salt and cost for a key derived from a passphrase: published beside the data
    /// in the seal record, so another machine derives the same key from the same passphrase.
    package struct Derivation: Sendable, Equatable {
        package var salt: [UInt8]
        package var operations: UInt64
        package var memoryBytes: Int

        /// The salt in hexadecimal, as `keys show` prints it and `--salt` takes it.
        package var saltText: String { Hex.string(salt) }

        /// A salt from its hexadecimal text; nil unless it is 16 bytes.
        package static func salt(fromText text: String) -> [UInt8]? {
            Hex.bytes(text).flatMap { $0.count == Sodium.saltBytes ? $0 : nil }
        }

        /// `{"salt":"…","operations":3,"memory":268435456}`, as seal records and the key file
        /// hold it.
        var json: JSONValue {
            .object([
                "salt": .string(saltText), "operations": .integer(Int64(clamping: operations)),
                "memory": .integer(Int64(memoryBytes)),
            ])
        }

        /// The derivation in `json` (`what` names it in messages).
        init(json: JSONValue, what: String) throws(SettingsError) {
            let fields = try JSONFields(json, what: what)
            guard let salt = Derivation.salt(fromText: try fields.string("salt")) else {
                throw SettingsError(.protocolError, "\(what)'s salt is malformed")
            }
            let operations = try fields.integer("operations")
            let memory = try fields.integer("memory")
            guard operations > 0, memory > 0 else {
                throw SettingsError(.protocolError, "\(what)'s cost is malformed")
            }
            self.init(salt: salt, operations: UInt64(operations), memoryBytes: Int(clamping: memory))
        }

        package init(salt: [UInt8], operations: UInt64, memoryBytes: Int) {
            self.salt = salt
            self.operations = operations
            self.memoryBytes = memoryBytes
        }
    }

    /// The bytes of each secret.
    static let secretBytes = Sodium.keyBytes

    package init(naming: [UInt8], sealing: [UInt8], derivation: Derivation? = nil) {
        precondition(naming.count == Self.secretBytes && sealing.count == Self.secretBytes)
        self.naming = naming
        self.sealing = sealing
        self.derivation = derivation
    }

    /// A new key from the system's random source.
    package static func random() -> SyncKey {
        SyncKey(naming: Sodium.randomBytes(secretBytes), sealing: Sodium.randomBytes(secretBytes))
    }

    /// The key derived from `passphrase` by Argon2id with `salt` (a new random one when nil) at
    /// `cost`; refuses a passphrase shorter than 12 characters.
    package static func derived(
        fromPassphrase passphrase: String, salt: [UInt8]? = nil, operations: UInt64? = nil,
        memoryBytes: Int? = nil
    ) throws(SettingsError) -> SyncKey {
        guard passphrase.count >= 12 else {
            throw SettingsError(
                .invalidValue,
                "the passphrase has \(passphrase.count) characters: use at least 12 (a few words)")
        }
        let salt = salt ?? Sodium.randomBytes(Sodium.saltBytes)
        let cost = Sodium.Cost(
            operations: operations ?? Sodium.Cost.moderate.operations,
            memoryBytes: memoryBytes ?? Sodium.Cost.moderate.memoryBytes)
        guard salt.count == Sodium.saltBytes, cost.operations >= Sodium.Cost.least.operations,
            cost.operations <= Sodium.Cost.most.operations, cost.memoryBytes >= Sodium.Cost.least.memoryBytes,
            cost.memoryBytes <= Sodium.Cost.most.memoryBytes
        else {
            throw SettingsError(
                .invalidValue,
                "the passphrase's derivation (salt of \(salt.count) bytes, \(cost.operations) passes, \(cost.memoryBytes >> 20) MiB) is outside what settingsd accepts"
            )
        }
        guard
            let bytes = Sodium.derive(
                passphrase: Array(passphrase.utf8), salt: salt, cost: cost, length: 2 * secretBytes)
        else {
            throw SettingsError(
                .io,
                "deriving the key from the passphrase needs \(cost.memoryBytes >> 20) MiB of memory, which it did not get"
            )
        }
        return SyncKey(
            naming: Array(bytes[0..<secretBytes]), sealing: Array(bytes[secretBytes...]),
            derivation: Derivation(salt: salt, operations: cost.operations, memoryBytes: cost.memoryBytes))
    }

    /// The key after a rotation: the same naming secret, a new random sealing secret.
    package func rotated() -> SyncKey {
        SyncKey(naming: naming, sealing: Sodium.randomBytes(Self.secretBytes))
    }

    /// Whether `other` names keys as this key does (the same key, or one rotated from it).
    package func sharesNaming(with other: SyncKey) -> Bool {
        Sodium.constantTimeEqual(naming, other.naming)
    }

    /// The key's public id: 16 hexadecimal digits of a BLAKE2b of both secrets.
    package var id: String { Hex.string(idBytes) }

    /// The id's 8 bytes, as sealed rows carry it.
    var idBytes: [UInt8] {
        Sodium.hash(Array("settingsd sync key id".utf8) + naming + sealing, length: 16).prefix(8).map { $0 }
    }

    package static func == (a: SyncKey, b: SyncKey) -> Bool {
        Sodium.constantTimeEqual(a.naming + a.sealing, b.naming + b.sealing)
    }
}

/// Lowercase hexadecimal, both ways.
enum Hex {
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text` (an even number of hexadecimal digits, either case), nil otherwise.
    static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = utf8[index].hexDigitValue, let low = utf8[index + 1].hexDigitValue else {
                return nil
            }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
