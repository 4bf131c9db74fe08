import SettingsStore
import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// End-to-end encryption on the hub link: how the link treats its namespace (plain or sealed,
/// `Sealing`), sealing a plain namespace or re-sealing one after a key rotation, and what it
/// reports of sealed rows it refuses.
extension HubConnector {
    /// Decides how the link treats `hub`'s namespace and sets its sealer. When this machine seals
    /// a plain namespace, it first pulls what the namespace holds in the clear (sealing deletes
    /// it); when the namespace is sealed under a key this one was rotated from, the rows stay
    /// readable. Then it publishes the seal record and pushes every entry it holds there sealed
    /// under its key.
    ///
    /// - Throws: `sealMismatch` when the namespace is sealed under a key this machine does not
    ///   hold, or it holds none, or marks the namespace plain; nothing is read or written then.
    func joinSealing(
        on hub: inout HubNamespace, as replica: ReplicaID, incarnation: UUID, pushed: Int64,
        cursor: inout Int64?, initialTarget: Int64?, entropy: inout HubAntiEntropy
    ) throws(SettingsError) {
        let record = try hub.sealRecord()
        let sealing = try Sealing.decide(
            record: record, keyring: configuration.keyring, marksPlain: marksPlain, target: hub.sealTarget,
            place: "hub namespace '\(hub.name)'")
        guard case .sealed(let sealer, let publishes) = sealing else {
            hub.sealer = nil
            entropy.sealer = nil
            update { $0.sealedUnder = nil }
            return
        }
        if publishes {
            if let record, let old = configuration.keyring?.key(withID: record.keyID) {
                // Sealed under a key this one was rotated from: pushes and pulls name it until
                // the record moves.
                hub.sealer = EntrySealer(key: old, previous: sealer.previous, target: hub.sealTarget)
            } else {
                hub.sealer = nil
                entropy.sealer = nil
                cursor = try pullAll(
                    from: hub, after: cursor, as: replica, initialTarget: initialTarget, entropy: &entropy
                ).cursor
            }
            guard try hub.replaceSeal(with: SealRecord(sealer: sealer), expecting: record) else {
                throw SettingsError(
                    .sealMismatch,
                    "another machine changed the seal of hub namespace '\(hub.name)' meanwhile; joining again"
                )
            }
            hub.sealer = sealer
            let count = try reseal(to: hub, as: replica, incarnation: incarnation, through: pushed)
            logger?.log(
                .warning,
                record == nil
                    ? "sealed hub namespace \(hub.name) under key \(sealer.key.id) (end-to-end encrypted): its rows in the clear were deleted from the hub (its backups and WAL archives still hold them) and \(count) entries pushed again sealed"
                    : "re-sealed hub namespace \(hub.name) under key \(sealer.key.id) (rotated from \(record?.keyID ?? "?")): \(count) entries pushed again"
            )
        }
        hub.sealer = sealer
        entropy.sealer = sealer
        entropy.reset()
        update { $0.sealedUnder = sealer.key.id }
    }

    /// Pushes every entry this replica holds that syncs, sealed, recording no new position:
    /// after sealing or re-sealing a namespace. Returns how many it pushed.
    private func reseal(to hub: HubNamespace, as replica: ReplicaID, incarnation: UUID, through pushed: Int64)
        throws(SettingsError) -> Int
    {
        let policy = settings.policy
        var after: Int64 = 0
        var count = 0
        while true {
            let entries = settings.entries(after: after, limit: HubNamespace.batchEntries)
            guard let last = entries.last else { break }
            let syncing = entries.filter { Self.travels($0, policy: policy) }
            if !syncing.isEmpty {
                try hub.push(syncing, from: replica, through: pushed, incarnation: incarnation)
                count += syncing.count
            }
            after = last.sequence
        }
        if count > 0 { try? hub.notifyListeners() }
        return count
    }

    /// Logs and counts sealed rows a read refused, each row once however often it is met.
    func noteRefused(_ refusals: SealRefusals, in hub: HubNamespace) {
        guard refusals.count > 0 else { return }
        let counted = state.withLock { state in
            let fresh = refusals.rows.subtracting(state.refusedRows)
            if state.refusedRows.count < 100_000 { state.refusedRows.formUnion(fresh) }
            state.status.sealedRowsRefused += fresh.count
            state.status.lastSealRefusal = refusals.first.last
            return fresh.count
        }
        guard counted > 0 else { return }
        logger?.log(
            .warning,
            "refused \(counted) sealed row(s) of hub namespace \(hub.name), never applied: \(refusals.summary)"
        )
    }
}
