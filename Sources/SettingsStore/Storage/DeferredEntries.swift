/// Entries whose change is durable in its history record but not yet in the `entries` table.
///
/// A commit that keeps history appends a record holding everything an entry row holds (key,
/// value, version, sequence number), so the row itself can wait: each commit then writes one
/// B-tree leaf (the history's last) instead of two, and a fold writes the rows of many commits
/// at once, in the transaction of the commit that takes the count past `foldThreshold`. After a
/// crash the rows still owed are read back from the records (`docs/STORAGE.md`, "Deferred
/// entries").
///
/// A record with a redacted value (a `secret` key) cannot stand in for its entry: such entries
/// are written directly, and a direct write takes the key out of the deferred set.
struct DeferredEntries {
    /// Past this many records since the last fold, a commit folds: it bounds what a fold writes
    /// at once (here ~1-3 ms, less than a WAL checkpoint) and what opening after a crash reads
    /// back, and the larger it is, the more changes of one key share a row write.
    static let foldThreshold = 2048

    /// A commit of more changes writes its rows at once (and folds): its keys rarely change again
    /// within a fold, so owing them would buy few shared row writes for the bookkeeping (initial
    /// sync batches of 1,000: ~4% faster written at once).
    static let largestDeferredCommit = 64

    /// Past this many value bytes deferred since the last fold, a commit folds too: large values
    /// are not kept twice (value and encoding) by the thousand, nor written by one fold at once.
    static let foldBytes = 4 << 20

    /// A deferred entry and its value as encoded for the record, so a fold does not encode it again.
    struct Pending {
        let entry: SettingEntry
        let encoded: [UInt8]?
    }

    /// The newest deferred entry of each key.
    private(set) var latest: [String: Pending] = [:]
    /// Records written since the last fold, whether or not their rows wait: folding every
    /// `foldThreshold` records keeps what an open after a crash reads back small.
    private var recordCount = 0
    /// Encoded value bytes deferred since the last fold (replaced ones included).
    private var byteCount = 0

    var isEmpty: Bool { latest.isEmpty }

    /// Whether a commit that writes `records` more records, deferring `bytes` more value bytes,
    /// should fold.
    func isDue(adding records: Int, bytes: Int) -> Bool {
        recordCount + records >= Self.foldThreshold || byteCount + bytes >= Self.foldBytes
    }

    /// After a commit that wrote `records` records: `deferred` now wait for a fold, and the
    /// rows of `direct` keys were written, newer than anything deferred for them.
    mutating func committed(records: Int, deferred: [Pending], direct: some Sequence<String>) {
        if !latest.isEmpty { for key in direct { latest.removeValue(forKey: key) } }
        for pending in deferred {
            latest[pending.entry.key] = pending
            byteCount += pending.encoded?.count ?? 0
        }
        recordCount += records
    }

    /// The rows were written: nothing is owed.
    mutating func removeAll() {
        latest.removeAll(keepingCapacity: true)
        recordCount = 0
        byteCount = 0
    }
}
