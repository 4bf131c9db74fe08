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
