extension SettingsBackend {
    /// The records of the keys whose newest changes are `heads`, newest first, merged into one
    /// list and filtered by `query`'s times and limit: each key's chain is walked back from its
    /// head, one record lookup per step.
    ///
    /// A chain stops at its first record older than `query`'s start (times follow sequence
    /// numbers, near enough), and where a record is missing.
    func history(following heads: [Int64], query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        // The next record of each chain, lowest sequence first so the newest is at the end.
        var frontier = heads.sorted()
        var records: [HistoryRecord] = []
        while records.count < query.limit, let sequence = frontier.popLast() {
            guard let link = try chainedRecord(at: sequence) else { continue }
            let time = link.record.timeMilliseconds
            if let since = query.sinceMilliseconds, time < since { continue }
            if let previous = link.previousSequence, previous < sequence {
                let index = frontier.partitioningIndex { $0 >= previous }
                if index == frontier.count || frontier[index] != previous {
                    frontier.insert(previous, at: index)
                }
            }
            if let until = query.untilMilliseconds, time > until { continue }
            records.append(link.record)
        }
        return records
    }
}

extension Array where Element: Comparable {
    /// The first index whose element `belongs` to the upper part of this sorted array.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
