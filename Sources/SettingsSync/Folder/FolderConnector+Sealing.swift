import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// End-to-end encryption in a synced folder: the folder's seal record (`seal.json` at its top),
/// how this link treats the folder (`Sealing`), and re-sealing this replica's own files.
extension FolderConnector {
    /// The 16 bytes every sealed folder binds into its key ids and seals (a folder has no name
    /// of its own that every machine shares: its path differs from machine to machine).
    static let sealTarget = Sodium.hash(Array("settingsd synced folder".utf8), length: 16)

    /// The seal record's path.
    var sealPath: String { root + "/" + FolderFileName.sealName }

    /// Reads the folder's seal record and decides how to treat the folder; when this machine
    /// seals it (it was plain, or sealed under a key this one was rotated from), writes the
    /// record. This replica's own files not sealed under the key are replaced by a sealed
    /// snapshot at the next write (`scanOwnFolder`).
    ///
    /// - Throws: `sealMismatch` when the folder is sealed under a key this machine does not hold,
    ///   or it holds none, or marks the folder plain; nothing is read or written then.
    func joinSealing() throws(SettingsError) {
        var record: SealRecord?
        if access(sealPath, F_OK) == 0 {
            record = try SealRecord.read(
                FileSystem.read(sealPath, limit: 1 << 16), from: "the folder '\(root)'")
        }
        let sealing = try Sealing.decide(
            record: record, keyring: keyring, marksPlain: marksPlain, target: Self.sealTarget,
            place: "the folder '\(root)'")
        let before = sealer?.key.id
        sealer = sealing.sealer
        if case .sealed(let sealer, true) = sealing {
            try FileSystem.writeAtomically(SealRecord(sealer: sealer).encoded(), to: sealPath)
            logger?.log(
                .warning,
                record == nil
                    ? "folder \(root): sealed under key \(sealer.key.id) (end-to-end encrypted); this replica's files are written again sealed, and each other machine seals its own when it starts with the key"
                    : "folder \(root): re-sealed under key \(sealer.key.id) (rotated from \(record?.keyID ?? "?")); this replica's files are written again"
            )
        }
        if sealer?.key.id != before {
            sealChecked = []
            lastState = nil
        }
        update { $0.sealedUnder = sealing.sealer?.key.id }
    }

    /// Whether this replica's own file `name` is sealed as the folder is (its header names the
    /// key, or names none in a plain folder); checked once per name.
    func isSealedAsFolder(_ name: String) -> Bool {
        if sealChecked.contains(name) { return true }
        guard let header = ownFileHeader(name) else { return true }
        let sealed = try? header.string("sealed")
        guard sealed == sealer?.key.id else { return false }
        sealChecked.insert(name)
        return true
    }

    /// Counts and logs the entries of a file that were refused.
    func noteRefused(_ refusals: SealRefusals, in path: String) {
        guard refusals.count > 0 else { return }
        update { status in
            status.sealedRowsRefused += refusals.count
            status.lastSealRefusal = refusals.first.last
        }
        logger?.log(
            .warning,
            "folder \(root): refused \(refusals.count) sealed entries of '\(path)', never applied: \(refusals.summary)"
        )
    }
}
