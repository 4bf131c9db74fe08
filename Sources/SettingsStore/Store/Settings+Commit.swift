#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// A batch of versioned changes on its way into a store, whatever its source.
struct Commit {
    /// The changes, versioned; their sequence numbers are assigned by the commit.
    var entries: [SettingEntry]
    /// Why they happen, as announced to observers.
    var reason: ChangeReason
    /// The replica that made them.
    var origin: ReplicaID
    /// For changes from a peer: how far through its log they take this replica.
    var cursor: PeerCursor? = nil
    /// Changes from a peer that the limits refused, announced with `quotaViolation`.
    var refused: [SettingsChange.KeyChange] = []
    /// Changes from a peer that their schema refused, announced with `schemaViolation`.
    var schemaRefused: [SettingsChange.KeyChange] = []
    /// Keys whose new state is not announced: tombstones for keys that held nothing here.
    var unannounced: Set<String> = []
    /// Who made each local write, in the order of `entries`, for the history (empty: nobody known).
    var actors: [ChangeActor?] = []
    /// The entry each of `entries` replaces, in their order, where the caller looked them up
    /// already under the writer lock (nil: the history looks them up).
    var replaced: [SettingEntry?]? = nil
    /// New schemas, defaults and locks, replacing the store's (announced with reason `system`).
    var policy: SettingsPolicy? = nil
}

extension Settings {
    /// The one path by which changes enter the store, for local writes, imports, resets, policy
    /// changes and replicas alike: persist atomically, then update memory, then queue the
    /// announcements and the commit notice (delivered by the caller once the writer lock is
    /// released, so observers may write, and nothing runs under the lock but this work).
    ///
    /// Call it under the writer lock, with entries the limits already admitted.
    func commit(_ commit: Commit, writer: inout SettingsWriter) throws(SettingsError) -> [SettingEntry] {
        let records = try writer.persist(commit.entries, cursor: commit.cursor, path: displayPath) {
            records in
            historyRecords(of: records, commit: commit)
        }
        finish(commit, records: records, writer: writer)
        return records
    }

    /// The part of a commit after its entries are durable (a policy change has none): memory,
    /// then the outbox. It cannot fail, so nothing durable is ever left unannounced.
    func finish(_ commit: Commit, records: [SettingEntry], writer: borrowing SettingsWriter) {
        var systemChanges: [SettingsChange.KeyChange] = []
        var scopesChanged = false
        cache.withLock { cache in
            if let policy = commit.policy {
                (systemChanges, scopesChanged) = cache.replacePolicy(with: policy, replica: commit.origin)
            }
            cache.apply(records)
        }
        let announced =
            commit.unannounced.isEmpty ? records : records.filter { !commit.unannounced.contains($0.key) }
        if !announced.isEmpty {
            let changes = announced.map(SettingsChange.KeyChange.init)
            observers.enqueue(
                SettingsChange(
                    reason: commit.reason, origin: commit.origin, changes: changes,
                    sequence: writer.lastSequence))
        }
        if !systemChanges.isEmpty {
            observers.enqueue(
                SettingsChange(
                    reason: .system, origin: commit.origin, changes: systemChanges,
                    sequence: writer.lastSequence))
        }
        if !commit.refused.isEmpty {
            observers.enqueue(
                SettingsChange(
                    reason: .quotaViolation, origin: commit.origin, changes: commit.refused,
                    sequence: writer.lastSequence))
        }
        if !commit.schemaRefused.isEmpty {
            observers.enqueue(
                SettingsChange(
                    reason: .schemaViolation, origin: commit.origin, changes: commit.schemaRefused,
                    sequence: writer.lastSequence))
        }
        // Replication hears of every commit, announced or not (a locked key's change still travels).
        if commit.policy != nil {
            if scopesChanged || !systemChanges.isEmpty {
                observers.enqueue(CommitNotice(kind: .policy, sequence: writer.lastSequence))
            }
        } else if !records.isEmpty || commit.cursor != nil {
            observers.enqueue(CommitNotice(kind: .entries, sequence: writer.lastSequence))
        }
    }

    /// The history records of `records` (stored, not yet applied to the cache): one per change,
    /// with the value it replaced and a link to the key's change before; values of `secret` keys
    /// as fingerprints only.
    private func historyRecords(of records: [SettingEntry], commit: Commit) -> [ChainedRecord] {
        guard configuration.history.isEnabled, !records.isEmpty else { return [] }
        let now = configuration.clock()
        let reason = commit.reason.rawValue
        let known = commit.replaced?.count == records.count ? commit.replaced : nil
        return cache.withLock { cache in
            records.enumerated().map { index, entry in
                let secret = cache.policy.schema.isSecret(entry.key)
                let redact = { (value: SettingValue?) in
                    value.map { self.redacted($0, inRecord: entry.sequence) }
                }
                let replaced = known.map { $0[index] } ?? cache.entries[entry.key]
                let previous = replaced?.value
                let record = HistoryRecord(
                    key: entry.key, value: secret ? redact(entry.value) : entry.value,
                    previous: secret ? redact(previous) : previous, isRedacted: secret,
                    version: entry.version,
                    sequence: entry.sequence, reason: reason, origin: commit.origin, timeMilliseconds: now,
                    actor: index < commit.actors.count ? commit.actors[index] : nil)
                return ChainedRecord(record: record, previousSequence: replaced?.sequence)
            }
        }
    }

    /// A secret value as the history keeps it: a fingerprint keyed by this store's secret key and
    /// by the record's sequence number. Equal values have unrelated fingerprints in different
    /// records, so nobody who can write the key can test guesses against an old record by
    /// writing them and comparing fingerprints.
    private func redacted(_ value: SettingValue, inRecord sequence: Int64) -> SettingValue {
        var bytes = withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        bytes += value.encoded()
        let text = String(fingerprintKey.hash(bytes), radix: 16)
        return .string("fingerprint:" + String(repeating: "0", count: 16 - text.count) + text)
    }

    /// Applies entries received from `peer` (each carrying the peer's sequence number), keeping
    /// for each key the highest version, and records `through` as the peer's cursor, all in one
    /// transaction (`through` nil: anti-entropy repairs, which move no cursor).
    ///
    /// Entries that would break a local limit (sizes, counts, nesting) are not applied and are
    /// announced with reason `quotaViolation`; applied ones are announced with `reason`
    /// (`replica` or `initialSync`). Entries stamped further ahead of this replica's clock than
    /// `maximumClockSkew` are applied (so replicas agree) but do not move the clock.
    @discardableResult
    package func applyRemote(
        _ incoming: [SettingEntry], from peer: ReplicaID, through: Int64?, reason: ChangeReason,
        peerIncarnation: UUID? = nil
    ) throws(SettingsError) -> RemoteBatchOutcome {
        let outcome = try writer.withLock { (writer) throws(SettingsError) -> RemoteBatchOutcome in
            let horizon = writer.tombstoneHorizon
            let merge = cache.withLock { $0.merge(incoming, limits: configuration.limits, horizon: horizon) }
            var accepted = merge.accepted
            var replaced = merge.replaced
            // A key deleted before the horizon must not come back: record its deletion again,
            // newer than what arrived, so the sender deletes it too.
            let localID = identity.withLock { $0 }
            for key in merge.expired {
                replaced.append(nil)
                accepted.append(
                    SettingEntry(
                        key: key, value: nil, version: SettingVersion(timestamp: horizon, replica: localID),
                        sequence: 0))
            }
            let now = configuration.clock()
            let ceiling = HybridTimestamp(
                milliseconds: now + configuration.maximumClockSkewMilliseconds, counter: 0)
            var ahead = 0
            for entry in accepted {
                // A stamp beyond the bound moves nothing: the write it came with is kept, and the
                // next local write to its key still beats it (`SettingsWriter.stamp`).
                if entry.version.timestamp > ceiling {
                    ahead += 1
                } else {
                    writer.clock.observe(entry.version.timestamp)
                }
            }
            // Entries exchanged by anti-entropy (`through` nil) move no cursor.
            let cursor = through.map { through in
                let previous = writer.peers[peer]?.receivedSequence ?? 0
                let record = PeerRecord(
                    receivedSequence: max(previous, through),
                    incarnation: peerIncarnation ?? writer.peers[peer]?.incarnation)
                return PeerCursor(peer: peer, record: record, contactMilliseconds: now)
            }
            // A locked key's change is kept for other machines but changes nothing here.
            let batch = Commit(
                entries: accepted, reason: reason, origin: peer, cursor: cursor, refused: merge.refused,
                schemaRefused: merge.schemaRefused, unannounced: Set(merge.expired + merge.locked),
                replaced: replaced)
            let records = try commit(batch, writer: &writer)
            let sequences = records.first.flatMap { first in records.last.map { first.sequence...$0.sequence }
            }
            return RemoteBatchOutcome(
                applied: records.count, refused: merge.refused.count, aheadOfClock: ahead,
                expired: merge.expired.count, sequences: sequences, rejected: merge.rejected.count,
                firstRejection: merge.rejected.first?.message)
        }
        observers.deliverPending()
        return outcome
    }
}

/// What applying a batch from a replica did.
package struct RemoteBatchOutcome: Equatable {
    /// Entries that changed this replica.
    package var applied: Int
    /// Entries the limits refused.
    var refused: Int
    /// Applied entries stamped further ahead of this replica's clock than `maximumClockSkew`.
    package var aheadOfClock: Int
    /// Entries for keys not held here that were older than the tombstone horizon, answered
    /// with a fresh deletion (counted in `applied` too).
    var expired: Int
    /// The local sequence numbers the applied entries took (contiguous), if any.
    package var sequences: ClosedRange<Int64>?
    /// Entries the arrival gate refused, and why the first was (for the log).
    package var rejected = 0
    package var firstRejection: String? = nil
}
