extension Settings {
    /// The hub namespace this store syncs as, if it ever joined one.
    package var account: SyncAccount? {
        writer.withLock { $0.account }
    }

    /// Makes `namespace` the store's account as a hub link to it starts, before the link (or the
    /// daemon) takes any write for it, and holds the store there until `releaseAccount()`.
    ///
    /// The first namespace is joined: the store's synced keys merge into it. Another namespace is
    /// an account change, made here at once, whether the hub is reachable or not: every synced
    /// entry of the old account is forgotten (observers hear `accountChange`, the history records
    /// each deletion, no tombstone is left to travel), and every cursor restarts, so the link
    /// pulls the new namespace whole. What the store acknowledges from now on belongs to the new
    /// account and is pushed to it. Keys of scope `local` stay.
    ///
    /// - Returns: What happened to the store's account.
    package func enterAccount(_ namespace: String) throws(SettingsError) -> AccountMeeting {
        let meeting = try writer.withLock { (writer) throws(SettingsError) -> AccountMeeting in
            let meeting: AccountMeeting
            if let current = writer.account {
                guard current.namespace != namespace else {
                    writer.accountPins += 1
                    return .unchanged
                }
                let account = SyncAccount(namespace: namespace, since: writer.clock.tick())
                meeting = try move(to: account, writer: &writer)
            } else {
                try record(SyncAccount(namespace: namespace, since: .zero), writer: &writer)
                meeting = .joined
            }
            writer.accountPins += 1
            return meeting
        }
        observers.deliverPending()
        return meeting
    }

    /// Lets the store's account move again with its socket peers' (a hub link stopped).
    package func releaseAccount() {
        writer.withLock { $0.accountPins = max(0, $0.accountPins - 1) }
    }

    /// Meets the account a socket peer announced in its hello: a store with none joins it; a
    /// store whose account the peer's supersedes (`SyncAccount.isSuperseded(by:)`) moves to it
    /// as `enterAccount` would, forgetting its synced entries stamped before the peer's change
    /// (those after it were written since, and are kept and sent). Otherwise nothing changes:
    /// a peer on an older account moves when it meets this one.
    ///
    /// - Throws: `accountMismatch` when the store must move but a hub link holds it.
    package func meet(account peer: SyncAccount?) throws(SettingsError) -> AccountMeeting {
        guard let peer else { return .unchanged }
        let meeting = try writer.withLock { (writer) throws(SettingsError) -> AccountMeeting in
            guard let current = writer.account else {
                try record(peer, writer: &writer)
                return .joined
            }
            guard current.isSuperseded(by: peer) else { return .unchanged }
            guard writer.accountPins == 0 else {
                throw SettingsError(
                    .accountMismatch,
                    "the peer syncs as hub namespace '\(peer.namespace)', this replica as '\(current.namespace)' through its own hub link: not syncing across accounts"
                )
            }
            return try move(to: peer, writer: &writer)
        }
        observers.deliverPending()
        return meeting
    }

    private func record(_ account: SyncAccount, writer: inout SettingsWriter) throws(SettingsError) {
        guard let backend = writer.backend else { throw .closed(path: displayPath) }
        try backend.recordAccount(account, forgetting: [], resettingCursors: false)
        writer.account = account
    }

    /// Moves the store to `account`: its synced entries stamped before the account's change (all
    /// of them when the change has no time, a namespace joined as a first) are deleted, the
    /// deletions recorded in the history, then forgotten with every peer cursor.
    ///
    /// The deletions are stamped just below the change, so a crash before they are forgotten
    /// leaves tombstones of the old account, which the next meeting forgets too; they can never
    /// pass for deletions made under the new one.
    private func move(to account: SyncAccount, writer: inout SettingsWriter) throws(SettingsError)
        -> AccountMeeting
    {
        guard let backend = writer.backend else { throw .closed(path: displayPath) }
        let previous = writer.account?.namespace ?? ""
        let cutoff = account.since > .zero ? account.since : writer.clock.tick()
        let leftovers = cache.withLock { cache in
            cache.entries.entries(whereKey: { cache.isShared($0) }).filter { $0.version.timestamp < cutoff }
        }
        let localID = identity.withLock { $0 }
        let stamp = SettingVersion(
            timestamp: HybridTimestamp(rawValue: cutoff.rawValue - 1), replica: localID)
        let deletions = leftovers.filter { $0.value != nil }.map {
            SettingEntry(key: $0.key, value: nil, version: stamp, sequence: 0)
        }
        if !deletions.isEmpty {
            _ = try commit(
                Commit(entries: deletions, reason: .accountChange, origin: localID), writer: &writer)
        }
        let forgotten = leftovers.map(\.key)
        try backend.recordAccount(account, forgetting: forgotten, resettingCursors: true)
        writer.account = account
        writer.peers = [:]
        cache.withLock { cache in cache.remove(forgotten.compactMap { cache.entries[$0] }) }
        return .changed(from: previous, forgotten: deletions.count)
    }
}
