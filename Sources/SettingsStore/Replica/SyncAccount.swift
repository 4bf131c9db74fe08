/// The hub namespace a store syncs as, like the iCloud account behind
/// `NSUbiquitousKeyValueStore`: joining a namespace merges the store's synced keys into it, and
/// moving to another one replaces them with its contents (`ChangeReason.accountChange`).
struct SyncAccount: Equatable, Sendable {
    /// The namespace's name.
    var namespace: String
    /// When the store last changed accounts (zero: it joined its first one): an entry a socket
    /// peer sends that is stamped before it was written under the old account, and is refused.
    var since: HybridTimestamp
}
