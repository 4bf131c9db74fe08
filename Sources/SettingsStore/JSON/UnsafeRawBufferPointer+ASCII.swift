extension UnsafeRawBufferPointer {
    /// Whether every byte is below 0x80, checked eight bytes at a time: ASCII text needs no
    /// UTF-8 validation and is its own NFC form.
    var isASCII: Bool {
        var high: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            high |= loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            high |= UInt64(self[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}

extension UnsafeRawBufferPointer {
    /// The offset of the first byte at or after `start` that a JSON string cannot hold as
    /// itself: a quote, a backslash or a control character, and DEL too when `includingDelete`
    /// (the writer escapes it; the parser takes it raw). `count` when there is none. Checked
    /// eight bytes at a time: a long value is almost all plain bytes.
    func firstJSONSpecial(from start: Int, includingDelete: Bool) -> Int {
        var offset = start
        while offset + 8 <= count {
            let word = loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if Self.hasJSONSpecial(word, includingDelete: includingDelete) { break }
            offset += 8
        }
        while offset < count {
            let byte = self[offset]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || (includingDelete && byte == 0x7F) {
                return offset
            }
            offset += 1
        }
        return count
    }

    private static let lowBits: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` is special (see `firstJSONSpecial`). Each test is exact for
    /// whether such a byte exists, so a word it clears holds none.
    private static func hasJSONSpecial(_ word: UInt64, includingDelete: Bool) -> Bool {
        // A zero byte of `value` makes its high bit survive; no false alarm without one.
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- lowBits) & ~value & highBits }
        // Bytes below 0x20: the same borrow trick, exact for any bound up to 0x80.
        var found = (word &- lowBits &* 0x20) & ~word & highBits
        found |= zeroBytes(word ^ (lowBits &* 0x22))
        found |= zeroBytes(word ^ (lowBits &* 0x5C))
        if includingDelete { found |= zeroBytes(word ^ (lowBits &* 0x7F)) }
        return found != 0
    }
}
