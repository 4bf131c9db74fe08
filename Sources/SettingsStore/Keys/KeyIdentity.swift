/// The one identity keys have everywhere: in memory, in SQLite, on the wire and in sync.
///
/// A key is its Unicode NFC form. Swift's `String` already compares canonically equivalent
/// strings as equal, but SQLite and the wire compare bytes; normalising every key where it enters
/// the store makes the two agree: canonically equivalent keys (`"caf\u{E9}"` and `"cafe\u{301}"`)
/// are one key, stored once, under the same bytes. Prefixes match by those bytes.
package enum KeyIdentity {
    /// `key` in NFC; ASCII keys (nearly all of them) are returned as they are, without copying.
    package static func normalize(_ key: String) -> String {
        if isASCII(key) { return key }
        // The standard library's own NFC (what Foundation's precomposed mapping uses underneath).
        return String(decoding: key._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `key` is already in its normal form.
    static func isNormalized(_ key: String) -> Bool {
        isASCII(key) || key.utf8.elementsEqual(key._nfcCodeUnits)
    }

    /// Whether the normal form of `key` starts with the normal form of `prefix`, byte by byte.
    static func hasPrefix(_ key: String, _ prefix: String) -> Bool {
        if prefix.isEmpty { return true }
        if isASCII(prefix) && isASCII(key) { return key.utf8.starts(with: prefix.utf8) }
        return normalize(key).utf8.starts(with: normalize(prefix).utf8)
    }

    /// Whether any key occurs twice in `keys` (may say so of distinct keys whose hashes collide,
    /// never the reverse): a set of the hashes alone, with no string kept, so no retains.
    static func hasRepeats(_ keys: some Sequence<String>) -> Bool {
        var hashes = Set<Int>(minimumCapacity: keys.underestimatedCount)
        for key in keys where !hashes.insert(key.hashValue).inserted { return true }
        return false
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).isASCII }
            ?? text.utf8.allSatisfy { $0 < 0x80 }
    }
}
