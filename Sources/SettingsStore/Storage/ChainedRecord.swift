/// A history record as stored: the record, and the sequence number of the same key's change
/// before it, which links a key's records into a chain walked newest first (no key index).
struct ChainedRecord {
    let record: HistoryRecord
    /// The key's previous change (its entry's sequence number when this change was made); nil
    /// for the key's first. The chain ends where that record is missing: pruned, or made while
    /// history was off.
    let previousSequence: Int64?
}
