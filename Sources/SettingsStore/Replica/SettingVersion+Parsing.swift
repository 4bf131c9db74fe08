extension SettingVersion: LosslessStringConvertible {
    /// Parses the `milliseconds.counter@replica` form of `description` (decimal digits only);
    /// nil when `text` is not one.
    ///
    /// Every entry a replica sends carries one, so it is read in one pass over the bytes.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ SettingVersion(utf8: $0) }) else { return nil }
        self = parsed
    }

    private init?(utf8: UnsafeBufferPointer<UInt8>) {
        var index = 0
        /// The decimal number that starts at `index` and ends before `terminator`, below `limit`.
        func number(endingAt terminator: UInt8, below limit: UInt64) -> UInt64? {
            var value: UInt64 = 0
            let start = index
            while index < utf8.count, utf8[index] != terminator {
                let digit = utf8[index] &- UInt8(ascii: "0")
                guard digit < 10, value < limit else { return nil }
                value = value * 10 + UInt64(digit)
                index += 1
            }
            guard index > start, index < utf8.count, value < limit else { return nil }
            index += 1  // the terminator
            return value
        }
        guard
            let milliseconds = number(
                endingAt: UInt8(ascii: "."), below: HybridTimestamp.maximumMilliseconds),
            let counter = number(endingAt: UInt8(ascii: "@"), below: UInt64(UInt16.max) + 1),
            let replica = ReplicaID(utf8: UnsafeBufferPointer(rebasing: utf8[index...]))
        else {
            return nil
        }
        self.init(
            timestamp: HybridTimestamp(milliseconds: milliseconds, counter: UInt16(counter)), replica: replica
        )
    }
}
