/// The secret key of one store's history fingerprints (SipHash-2-4, 128-bit key): a `secret`
/// key's values are recorded as keyed fingerprints, so equal secrets show as equal within that
/// store, and a fingerprint reveals nothing without the store's file (which holds the key, and
/// the current value anyway). An unkeyed hash, the same on every machine, let a dictionary or a
/// loop over four digits recover the value from the history alone.
struct FingerprintKey: Sendable, Equatable {
    let k0: UInt64
    let k1: UInt64

    /// A new random key.
    static func random() -> FingerprintKey {
        var generator = SystemRandomNumberGenerator()
        return FingerprintKey(k0: generator.next(), k1: generator.next())
    }

    /// SipHash-2-4 of `bytes` under this key.
    func hash(_ bytes: [UInt8]) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = v1.rotatedLeft(13) ^ v0
            v0 = v0.rotatedLeft(32)
            v2 &+= v3
            v3 = v3.rotatedLeft(16) ^ v2
            v0 &+= v3
            v3 = v3.rotatedLeft(21) ^ v0
            v2 &+= v1
            v1 = v1.rotatedLeft(17) ^ v2
            v2 = v2.rotatedLeft(32)
        }
        func absorb(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }
        let whole = bytes.count / 8 * 8
        for start in stride(from: 0, to: whole, by: 8) {
            var word: UInt64 = 0
            for index in 0..<8 { word |= UInt64(bytes[start + index]) << (8 * index) }
            absorb(word)
        }
        var last = UInt64(truncatingIfNeeded: bytes.count) << 56
        for index in whole..<bytes.count { last |= UInt64(bytes[index]) << (8 * (index - whole)) }
        absorb(last)
        v2 ^= 0xFF
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
        self << count | self >> (64 - count)
    }
}
