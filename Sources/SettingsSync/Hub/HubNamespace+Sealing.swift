package import SettingsStore

extension HubNamespace {
    /// The 16 bytes a sealer for this namespace binds into key ids and seals: its peer id, made
    /// from the hub's id and the namespace's name, so a row copied into another namespace (or
    /// another hub) fails to open.
    package var sealTarget: [UInt8] { peerID.bytes }

    /// The namespace's seal record; nil while it is plain.
    package func sealRecord() throws(SettingsError) -> SealRecord? {
        let rows = try connection.execute(
            "SELECT key_id, record FROM settingsd.seals WHERE namespace = $1", [.text(name)])
        guard rows.count == 1 else { return nil }
        let record = try SealRecord.read(rows.withBytes(0, 1) { Array($0) }, from: "hub namespace '\(name)'")
        guard record.keyID == rows.text(0, 0) else {
            throw SettingsError(
                .protocolError,
                "the seal record of hub namespace '\(name)' names key \(record.keyID), its row key \(rows.text(0, 0)): it was altered"
            )
        }
        return record
    }

    /// Seals the namespace under `record`'s key when it is still sealed under `expected`'s (nil:
    /// plain, and then its rows are deleted in the same transaction); returns whether it did.
    package func replaceSeal(with record: SealRecord, expecting expected: SealRecord?) throws(SettingsError)
        -> Bool
    {
        let rows = try connection.execute(
            "SELECT settingsd.seal($1, $2, $3, $4)::int::bigint",
            [
                .text(name), .text(record.keyID), .bytes(record.encoded()),
                expected.map { .text($0.keyID) } ?? .null,
            ])
        return rows.count == 1 && rows.int64(0, 0) == 1
    }
}
