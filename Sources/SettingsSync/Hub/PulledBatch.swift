package import SettingsStore
import SettingsWire

/// What one `HubNamespace.pull` brought: the rows after the cursor, in hub order.
package struct PulledBatch {
    /// The entries to merge (each entry's `sequence` is its hub sequence number).
    package var entries: [SettingEntry] = []
    /// Rows the puller pushed itself: their keys and versions (it normally holds them).
    package var mine: [(key: String, version: SettingVersion)] = []
    /// Where the cursor moves: the last hub sequence number the batch covers.
    package var through: Int64
    /// Rows this build cannot read or that are out of range, skipped.
    package var unreadable = 0
    /// The batch held every row after the cursor: no need to pull again.
    package var complete = false
    /// Sealed rows refused (tampered with, or sealed under a key this machine does not hold).
    package var refusals = SealRefusals()
    /// The namespace's counter as the statement saw it (nil: the namespace has no counter row).
    /// When the batch is complete, nothing through it was left out.
    package var counter: Int64?

    package init(through: Int64, counter: Int64?) {
        self.through = through
        self.counter = counter
    }

    /// Takes one row: a hub sequence number out of range is
    /// never computed with, nor taken as the cursor; a row that is oversize, has a malformed
    /// version, key or value is counted unreadable; the puller's own rows keep only their keys.
    mutating func take(
        sequence: Int64, isReadable: Bool, version: SettingVersion?, isMine: Bool,
        key: (SettingVersion) -> String?,
        entry: (SettingVersion, Int64) -> SettingEntry?
    ) {
        guard Arrival.isPosition(sequence) else {
            unreadable += 1
            return
        }
        through = max(through, sequence)
        guard isReadable, let version else {
            unreadable += 1
            return
        }
        if isMine, let key = key(version) {
            mine.append((key, version))
        } else if !isMine, let entry = entry(version, sequence) {
            entries.append(entry)
        } else {
            unreadable += 1
        }
    }

    /// Once every row is taken: when every candidate of the window came, everything through its
    /// end has been seen. The last window is open-ended (rows numbered past the counter by hand
    /// come too), and complete: the cursor moves to the counter.
    mutating func finish(
        after cursor: Int64, window: Int64, limit: Int, returned: Int64, candidates: Int64, counter: Int64?
    ) {
        guard returned == candidates, candidates < Int64(limit), let counter, Arrival.isPosition(counter)
        else { return }
        guard cursor + window >= counter else {
            through = max(through, cursor + window)
            return
        }
        through = max(through, counter)
        complete = true
    }
}
