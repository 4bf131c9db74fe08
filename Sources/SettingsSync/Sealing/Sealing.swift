package import SettingsStore

/// How a link treats one target (a hub namespace, a synced folder), decided as it joins from
/// what this machine holds and what the target's seal record says.
package enum Sealing: Sendable {
    /// Entries travel as they are: this machine holds no key (or marks the target plain), and the
    /// target has no seal record.
    case plain
    /// Entries are sealed with `sealer`. `publishes`: the target has no record of this key yet
    /// (it was plain, or sealed under a key this one was rotated from), so the link writes the
    /// record and seals everything it holds there again.
    case sealed(EntrySealer, publishes: Bool)

    /// The sealer, when sealed.
    package var sealer: EntrySealer? {
        if case .sealed(let sealer, _) = self { sealer } else { nil }
    }

    /// The decision for a target named `target` (`place` names it in messages, like "hub
    /// namespace 'ana'"), given its record, the keys this machine holds (nil: none), and whether
    /// the target is marked plain here.
    ///
    /// - Throws: `sealMismatch` when the target is sealed and this machine holds no key, marks it
    ///   plain, or holds another key; `protocolError` when the record's tag does not verify.
    package static func decide(
        record: SealRecord?, keyring: SyncKeyring?, marksPlain: Bool, target: [UInt8], place: String
    ) throws(SettingsError) -> Sealing {
        guard let keyring, !marksPlain else {
            guard let record else { return .plain }
            throw SettingsError(
                .sealMismatch,
                keyring == nil
                    ? "\(place) is end-to-end encrypted under key \(record.keyID), and this machine holds no sync key: import it ('settingsd keys export' on a machine that syncs it, then 'settingsd keys import' here)"
                    : "\(place) is end-to-end encrypted under key \(record.keyID), but it is marked plain here: remove settingsd_seal=off (or --plain-folder) to sync it"
            )
        }
        let sealer = keyring.sealer(for: target)
        guard let record else { return .sealed(sealer, publishes: true) }
        guard let key = keyring.key(withID: record.keyID) else {
            throw SettingsError(
                .sealMismatch,
                "\(place) is end-to-end encrypted under key \(record.keyID), and this machine holds key \(keyring.keyID): import the key the other machines use ('settingsd keys export' there, 'settingsd keys import' here); nothing was read or written"
            )
        }
        guard record.verifies(with: EntrySealer(key: key, target: target)) else {
            throw SettingsError(
                .protocolError,
                "the seal record of \(place) names key \(record.keyID) but its tag does not verify under it: it was altered; nothing was read or written"
            )
        }
        return .sealed(sealer, publishes: key != keyring.current)
    }
}
