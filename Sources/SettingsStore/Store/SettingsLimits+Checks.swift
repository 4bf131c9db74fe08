extension SettingsLimits {
    /// Checks what one value may be on its own, its size and nesting (keys are checked by
    /// `KeyValidation`). Every write is held to this, whether local, imported or from a replica.
    func check(_ value: SettingValue, forKey key: String) throws(SettingsError) {
        try value.checkNesting(key: key)
        let size = value.storageSize
        guard size <= maximumValueBytes else {
            throw SettingsError(
                .limitExceeded,
                "value for '\(key)' is \(size) bytes, over the limit of \(maximumValueBytes) (maximumValueBytes)",
                key: key)
        }
    }

    /// Checks the store's totals after a write to `key`: a count or a size over its limit is
    /// refused unless it is no larger than `before` (a store over a lowered limit can shrink).
    func checkTotals(_ after: StoreTotals, before: StoreTotals, key: String) throws(SettingsError) {
        if let maximum = maximumKeyCount, after.keys > maximum, after.keys > before.keys {
            throw SettingsError(
                .limitExceeded,
                "writing '\(key)' would make \(after.keys) keys, over the limit of \(maximum) (maximumKeyCount)",
                key: key)
        }
        if let maximum = maximumTotalBytes, after.bytes > maximum, after.bytes > before.bytes {
            throw SettingsError(
                .limitExceeded,
                "writing '\(key)' would make \(after.bytes) bytes in all, over the limit of \(maximum) (maximumTotalBytes)",
                key: key)
        }
    }
}

/// How many keys hold values, and the bytes they take (keys plus stored values), as counted
/// against `SettingsLimits.maximumKeyCount` and `maximumTotalBytes`.
package struct StoreTotals: Sendable, Equatable {
    /// Keys holding values.
    package var keys: Int
    /// Bytes of those keys and their stored values.
    package var bytes: Int

    /// Creates totals.
    package init(keys: Int, bytes: Int) {
        self.keys = keys
        self.bytes = bytes
    }

    /// The totals once `key` goes from `old` to `new` (either may be nil: unset).
    func replacing(key: String, old: SettingValue?, with new: SettingValue?) -> StoreTotals {
        var totals = self
        if let old {
            totals.keys -= 1
            totals.bytes -= Self.footprint(key: key, value: old)
        }
        if let new {
            totals.keys += 1
            totals.bytes += Self.footprint(key: key, value: new)
        }
        return totals
    }

    /// What a live key counts against `maximumTotalBytes`.
    static func footprint(key: String, value: SettingValue) -> Int {
        key.utf8.count + value.storageSize
    }
}
