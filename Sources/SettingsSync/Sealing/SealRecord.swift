package import SettingsStore

/// What a sealed target publishes beside its data: that it is sealed, under which key (its
/// public id), how a key derived from a passphrase was derived (Argon2id's salt and cost, so
/// another machine derives the same key), and a tag keyed with that key over all of it.
///
/// The hub keeps it in `settingsd.seals`, a synced folder in `seal.json`:
///
/// ```
/// {"settingsd":"seal","version":1,"key":"3f9c…","derivation":{"salt":"…","operations":3,"memory":268435456},"tag":"…"}
/// ```
///
/// Whether to seal is decided by each machine (it holds a key, and the target is not marked
/// plain there), never by the record: a record removed or forged cannot make a machine with
/// a key write in the clear.
package struct SealRecord: Equatable, Sendable {
    /// The id of the key the target is sealed under.
    package var keyID: String
    /// The derivation of a key made from a passphrase.
    package var derivation: SyncKey.Derivation?
    /// The keyed tag over the fields above and the target.
    var tag: [UInt8]

    /// The record for a target sealed by `sealer` (under its current key).
    package init(sealer: EntrySealer) {
        keyID = sealer.key.id
        derivation = sealer.key.derivation
        tag = sealer.tag(Self.signed(keyID: keyID, derivation: derivation))
    }

    private init(keyID: String, derivation: SyncKey.Derivation?, tag: [UInt8]) {
        self.keyID = keyID
        self.derivation = derivation
        self.tag = tag
    }

    /// Whether the tag verifies under `sealer`'s current key (the key the record names).
    package func verifies(with sealer: EntrySealer) -> Bool {
        Sodium.constantTimeEqual(tag, sealer.tag(Self.signed(keyID: keyID, derivation: derivation)))
    }

    private static func signed(keyID: String, derivation: SyncKey.Derivation?) -> [UInt8] {
        var bytes = Array(keyID.utf8) + [0]
        if let derivation {
            bytes += derivation.salt
            withUnsafeBytes(of: derivation.operations.bigEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt64(derivation.memoryBytes).bigEndian) { bytes += $0 }
        }
        return bytes
    }

    /// The record's bytes: one line of JSON.
    package func encoded() -> [UInt8] {
        var fields: [String: JSONValue] = [
            "settingsd": "seal", "version": .integer(1), "key": .string(keyID),
            "tag": .string(Hex.string(tag)),
        ]
        fields["derivation"] = derivation?.json
        var bytes: [UInt8] = []
        JSONValue.object(fields).write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Reads a record's bytes (`source` names where they came from, for the message).
    package static func read(_ bytes: some Collection<UInt8>, from source: String) throws(SettingsError)
        -> SealRecord
    {
        do throws(SettingsError) {
            let fields = try JSONFields(JSONValue.parse(Array(bytes)), what: "a seal record")
            guard try fields.string("settingsd") == "seal" else {
                throw SettingsError(.protocolError, "it is not a settingsd seal record")
            }
            let version = try fields.integer("version")
            guard version == 1 else {
                throw SettingsError(.unsupportedVersion, "it is of version \(version): upgrade settingsd")
            }
            let keyID = try fields.string("key")
            guard keyID.utf8.count == 16, Hex.bytes(keyID) != nil,
                let tag = Hex.bytes(try fields.string("tag")),
                tag.count == 16
            else { throw SettingsError(.protocolError, "its key id or tag is malformed") }
            var derivation: SyncKey.Derivation?
            if let object = fields.members["derivation"], object != .null {
                derivation = try SyncKey.Derivation(json: object, what: "its derivation")
            }
            return SealRecord(keyID: keyID, derivation: derivation, tag: tag)
        } catch {
            throw SettingsError(error.code, "the seal record of \(source) cannot be read: \(error.message)")
        }
    }
}
