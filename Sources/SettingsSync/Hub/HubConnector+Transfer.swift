import SettingsStore
import SettingsWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The link's transfers: pulling what the hub has after the cursor, batch by batch, and pushing
/// this replica's own entries after what the hub recorded of it.
extension HubConnector {
    /// Applies what the hub has after `cursor`, batch by batch; returns the new cursor and the
    /// counter the last batch saw.
    func pullAll(
        from hub: HubNamespace, after cursor: Int64?, as replica: ReplicaID, initialTarget: Int64?,
        entropy: inout HubAntiEntropy
    )
        throws(SettingsError) -> (cursor: Int64?, counter: Int64?)
    {
        var cursor = cursor
        while true {
            let limits = settings.configuration.limits
            let batch = try hub.pull(after: cursor ?? 0, for: replica, limits: limits)
            guard batch.through > (cursor ?? 0) else { return (cursor, batch.counter) }
            // Rows under this replica's id newer than what it holds (another copy of its file
            // pushed them, or they were forged): fetched and merged like any.
            var entries = batch.entries
            let strangers = batch.mine.filter { row in
                settings.entry(forKey: row.key).map { $0.version < row.version } ?? true
            }
            if !strangers.isEmpty {
                let fetched = try hub.entries(forKeys: strangers.map(\.key), limits: limits)
                entries += fetched.entries.map(\.entry)
                noteRefused(hub.takeRefusals(), in: hub)
                logger?.log(
                    .warning,
                    "the hub holds \(strangers.count) entr\(strangers.count == 1 ? "y" : "ies") pushed under this replica's id that it does not hold (a copy of its file, or forged rows); merging them"
                )
            }
            noteRefused(batch.refusals, in: hub)
            if batch.unreadable > batch.refusals.count {
                logger?.log(
                    .warning,
                    "skipped \(batch.unreadable - batch.refusals.count) hub entries that this build cannot read or that are out of range (oversize keys or values, forged sequence numbers)"
                )
            }
            let isInitial = initialTarget.map { batch.through <= $0 && $0 > 0 } ?? false
            let outcome = try settings.applyRemote(
                entries, from: hub.peerID, through: batch.through,
                reason: isInitial ? .initialSync : .replica)
            if outcome.rejected > 0 {
                logger?.log(
                    .warning,
                    "refused \(outcome.rejected) hub entr\(outcome.rejected == 1 ? "y" : "ies") in namespace \(hub.name): \(outcome.firstRejection ?? "")"
                )
            }
            if let sequences = outcome.sequences { noteFromHub(sequences) }
            noteAhead(outcome.aheadOfClock)
            if outcome.applied < entries.count {
                // Known as refused, so anti-entropy does not offer them (and announce them) again.
                entropy.refuse(refusedRows(entries.map { ($0, HubFingerprint.of($0, sealedBy: hub.sealer)) }))
            }
            cursor = batch.through
            update { $0.lastContactMilliseconds = settings.configuration.clock() }
            if batch.complete { return (cursor, batch.counter) }
        }
    }

    /// Checks that the namespace the hub connected this link to is the store's account: the one
    /// the link entered as it started, or, when only the connection can tell (a service file
    /// names the role), the store's first namespace, entered now. An account change never
    /// happens here, once writes may have been taken: a namespace other than the account is
    /// refused, and nothing is pushed or pulled.
    func settleAccount(on hub: HubNamespace) throws(SettingsError) {
        let entered = enteredNamespace
        if entered == nil, settings.account.map({ $0.namespace == hub.name }) ?? true {
            _ = try enter(hub.name)
            return
        }
        let account = settings.account?.namespace
        guard entered != nil, entered == hub.name, account == hub.name else {
            throw SettingsError(
                .accountMismatch,
                "the hub connected this replica to namespace '\(hub.name)', but it syncs as '\(account ?? entered ?? "?")': name the namespace (--hub-namespace, HubConfiguration.namespace) to change accounts, which then happens as the link starts"
            )
        }
    }

    /// Where this replica's pushes to `hub` continue from: the position the hub recorded, when
    /// this replica's lineage continues the incarnation it was recorded under. Otherwise the
    /// store file was restored from a backup or copied (the hub saw pushes this history never
    /// made, offline writes since or not), and the replica takes a new id, as with socket peers.
    func continuedPosition(on hub: HubNamespace, as localID: ReplicaID) throws(SettingsError) -> Int64 {
        let record = try hub.pushedRecord(of: localID)
        let sequence = settings.sequence
        guard
            !settings.lineage.continues(
                cursor: record.sequence, recordedUnder: record.incarnation, sequence: sequence)
        else { return record.sequence }
        logger?.log(
            .warning,
            "the hub's namespace \(hub.name) holds pushes through \(record.sequence) from this replica that its history (now at \(sequence)) did not make: its file was restored from a backup or copied; taking a new replica id"
        )
        try settings.takeNewIdentity(ifStill: localID)
        throw SettingsError(.replicaForked, "this replica took a new id after a fork; reconnecting")
    }

    /// Pushes the local entries after `pushed` that did not come from the hub; returns the new
    /// pushed position, and the hub cursor: when a push's hub sequence numbers follow the cursor
    /// directly, nobody else wrote in between and the cursor moves past them without a pull.
    func pushAll(
        to hub: HubNamespace, after pushed: Int64, as replica: ReplicaID, incarnation: UUID, cursor: Int64?
    )
        throws(SettingsError) -> (pushed: Int64, cursor: Int64?)
    {
        var pushed = pushed
        var cursor = cursor
        var numbered = false
        while true {
            let candidates = settings.entries(after: pushed, limit: HubNamespace.batchEntries)
            guard let last = candidates.last else {
                // Numbers no entry held at opening (rows lost from a damaged file) carry nothing:
                // pushed, or the link would show them pending for good (a quiet round records it).
                let opened = settings.openedSequence
                if pushed < opened { markPushed(through: opened) }
                if numbered { notifyListeners(of: hub) }
                return (max(pushed, opened), cursor)
            }
            let fromHub = sequencesFromHub
            let policy = settings.policy
            let needed = candidates.filter { entry in
                !fromHub.contains { $0.contains(entry.sequence) } && Self.travels(entry, policy: policy)
            }
            // Nothing but the hub's own entries: recording the position alone is a write
            // transaction on the hub, which a change would cost every machine on the namespace.
            // It waits for a quiet round (or `unrecordedLimit` numbers), and a reconnect before
            // then only offers the hub entries it already holds.
            let skips =
                needed.isEmpty && !hub.recordLags(replica, behind: last.sequence, by: Self.unrecordedLimit)
            let numbers =
                skips
                ? nil : try hub.push(needed, from: replica, through: last.sequence, incarnation: incarnation)
            if numbers != nil { numbered = true }
            if let numbers, numbers.lowerBound == (cursor ?? 0) + 1 {
                // Persisted like any cursor, in the store's own commit.
                try settings.applyRemote([], from: hub.peerID, through: numbers.upperBound, reason: .replica)
                cursor = numbers.upperBound
            }
            pushed = last.sequence
            markPushed(through: pushed)
        }
    }

    /// Whether `entry` goes to the hub at all: not of scope `local`, and not nested deeper than a
    /// value may be.
    static func travels(_ entry: SettingEntry, policy: SettingsPolicy) -> Bool {
        (policy.isEmpty || !policy.isLocal(entry.key))
            && (entry.value?.nestingDepth ?? 0) <= SettingValue.maximumNestingDepth
    }

    /// Tells the namespace's listeners that pushes landed, after they committed. A failure (a
    /// full notification queue) fails no push: listeners find the change at their next look.
    private func notifyListeners(of hub: HubNamespace) {
        do throws(SettingsError) {
            try hub.notifyListeners()
        } catch  where error.code != .connectionLost {
            logger?.log(
                .info,
                "could not notify the listeners of namespace \(hub.name) (they find the change later): \(error.message)"
            )
        } catch {
            // The next statement on the connection meets the same failure and reconnects.
        }
    }
}
