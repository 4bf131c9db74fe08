/// A polling link's cheaper question for a quiet hub: has any transaction finished on the hub's
/// server since the last look? When none has, the namespace's counter cannot have moved, and the
/// poll need not read it.
///
/// Every poll reads, in one statement and so one snapshot, the server's snapshot
/// (`txid_current_snapshot()`: the transactions running, and the first not yet finished) and when
/// the server started, beside the counter. Two equal snapshots mean no transaction committed in
/// between: one that was running would have left the list of running ones, and one begun since
/// carries a number at or past the first unfinished, which its commit would have moved. The start
/// time tells a restarted, restored or failed-over server apart even where its numbers coincide.
/// So the next poll guards the counter with the last look: the server reads the counter only when
/// its snapshot differs (`CASE`), and on a quiet hub the statement costs PostgreSQL about three
/// fifths of the counter's (its row, its index and row-level security). A busy hub, whose snapshot
/// changes between polls, pays the counter as before, in the same one statement.
///
/// Lives as long as one connection: a new connection starts with no baseline.
package struct HubQuietCheck {
    /// A poll's look at the server: its snapshot and start time, as text.
    package struct Look: Equatable {
        package let snapshot: String
        package let started: String

        /// A look from the hub, or nil when it is not one a quiet check can trust: missing, or
        /// longer than any snapshot of a quiet server (a busy one lists every running
        /// transaction; it is hub input, and is never kept large).
        package init?(snapshot: String?, started: String?) {
            guard let snapshot, let started,
                snapshot.utf8.count + started.utf8.count <= HubQuietCheck.longestLook
            else { return nil }
            self.snapshot = snapshot
            self.started = started
        }
    }

    /// The most bytes of a look a link keeps.
    package static let longestLook = 512

    /// What the last poll that read the counter saw, with the counter.
    private var last: (look: Look, counter: Int64)?
    /// False once the hub refused the snapshot's functions: polls read the counter alone.
    package private(set) var isAvailable = true

    package init() {}

    /// The look the next poll guards the counter with, and the counter it vouches for while the
    /// server's snapshot is still that look; nil when the next poll reads the counter outright.
    package var baseline: (look: Look, counter: Int64)? {
        isAvailable ? last : nil
    }

    /// A poll read `counter` and `look` in one statement: the next poll's baseline, or none when
    /// the look is missing or not to be trusted.
    package mutating func record(_ look: Look?, counter: Int64) {
        last = look.map { ($0, counter) }
    }

    /// The counter the baseline vouches for when a guarded poll saw `look` and the server did
    /// not read the counter; nil when the look differs (or is missing) and the counter must be
    /// read.
    package func vouches(for look: Look?) -> Int64? {
        guard let baseline, let look, look == baseline.look else { return nil }
        return baseline.counter
    }

    /// The hub refused the snapshot's functions (a role without EXECUTE on them).
    package mutating func becomeUnavailable() {
        isAvailable = false
        last = nil
    }
}
