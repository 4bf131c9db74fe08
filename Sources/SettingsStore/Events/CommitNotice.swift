/// What the store tells the parts that act on every commit, announced or not (replication):
/// delivered with the announcements, after the writer lock is released, in commit order.
///
/// A commit can change what replicas must exchange without announcing anything: a peer's change
/// to a locked key is kept for other machines but changes no value here, a tombstone for a key
/// this store never held, a re-stamped entry. Observers do not hear of those; replication must.
package struct CommitNotice: Sendable, Equatable {
    /// What changed.
    package enum Kind: Sendable, Equatable {
        /// Entries were stored (`sequence` is the last one's local sequence number).
        case entries
        /// The schemas, defaults or locks changed: what a digest covers may differ although no
        /// sequence number moved (a key's scope became `local`, or stopped being).
        case policy
        /// The replica took a new identity: every session must end and reconnect under it.
        case identity
    }

    /// What changed.
    package var kind: Kind
    /// The store's highest local sequence number after the commit.
    package var sequence: Int64
}
