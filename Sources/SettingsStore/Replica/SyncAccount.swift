/// The hub namespace a store syncs as, like the iCloud account behind
/// `NSUbiquitousKeyValueStore`: joining a first namespace merges the store's synced keys into it;
/// moving to another one is an account change (`ChangeReason.accountChange`), which takes effect
/// when the hub link starts, before the store takes a write for the new account.
///
/// Socket peers carry their account in the hello, so a replica that syncs only through another
/// follows that replica's account changes.
package struct SyncAccount: Equatable, Sendable {
    /// The namespace's name.
    package var namespace: String
    /// When the store moved to this namespace (zero: it joined it as its first). Synced entries
    /// stamped before it belong to the account it left.
    package var since: HybridTimestamp

    package init(namespace: String, since: HybridTimestamp) {
        self.namespace = namespace
        self.since = since
    }

    /// Whether a replica on this account moves to `other` when the two meet: the later change
    /// wins (ties go by name, so both sides decide alike). Replicas on one namespace never move.
    func isSuperseded(by other: SyncAccount) -> Bool {
        guard namespace != other.namespace else { return false }
        return since != other.since
            ? since < other.since : namespace.utf8.lexicographicallyPrecedes(other.namespace.utf8)
    }
}

/// What a store did with the account a peer announced (`Settings.meet(account:)`).
package enum AccountMeeting: Equatable {
    /// Both are on one account, or the peer has none, or this store's account is the later one
    /// (the peer moves).
    case unchanged
    /// The store had no account and takes the peer's: its keys merge, as with a first namespace.
    case joined
    /// The store moved to the peer's account: its synced entries from before were forgotten.
    case changed(from: String, forgotten: Int)
}
