/// What one `HubNamespace.pull` brought: the rows after the cursor, in hub order.
package struct PulledBatch {
    /// The entries to merge (each entry's `sequence` is its hub sequence number).
    package var entries: [SettingEntry] = []
    /// Rows the puller pushed itself, without their values: their keys and versions.
    package var mine: [(key: String, version: SettingVersion)] = []
    /// Where the cursor moves: the last hub sequence number the batch covers.
    package var through: Int64
    /// Rows this build cannot read or that are out of range, skipped.
    package var unreadable = 0
    /// The batch held every row after the cursor: no need to pull again.
    package var complete = false
    /// The namespace's counter as the statement saw it (nil: the namespace has no counter row).
    /// When the batch is complete, nothing through it was left out.
    package var counter: Int64?
}
