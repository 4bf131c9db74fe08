#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A fast, process-independent 64-bit hash for replica digests (Swift's `Hasher` is seeded per
/// process, so two replicas could never compare its results).
package struct Fingerprint {
    package private(set) var value: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A fingerprint of nothing yet.
    package init() {}

    @inline(__always) package mutating func mix(word: UInt64) {
        // splitmix64-style finalizer over a running state: cheap, and every bit of input matters.
        var z = (value ^ word) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        value = z ^ (z >> 31)
    }

    @inline(__always) mutating func mix(bytes: UnsafeRawBufferPointer) {
        mix(word: UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            mix(word: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
            offset += 8
        }
        var tail: UInt64 = 0
        for (shift, byte) in bytes[offset...].enumerated() { tail |= UInt64(byte) << (8 * UInt64(shift)) }
        mix(word: tail)
    }

    @inline(__always) package mutating func mix(text: String) {
        var text = text
        text.withUTF8 { mix(bytes: UnsafeRawBufferPointer($0)) }
    }

    mutating func mix(value: SettingValue) {
        switch value {
        case .bool(let flag): mix(word: flag ? 2 : 1)
        case .integer(let number):
            mix(word: 3)
            mix(word: UInt64(bitPattern: number))
        case .double(let number):
            mix(word: 4)
            mix(word: number.bitPattern)
        case .string(let text):
            mix(word: 5)
            mix(text: text)
        case .data(let data):
            mix(word: 6)
            data.withUnsafeBytes { mix(bytes: $0) }
        case .date(let date):
            mix(word: 7)
            mix(word: date.timeIntervalSinceReferenceDate.bitPattern)
        case .array(let values):
            mix(word: 8)
            mix(word: UInt64(values.count))
            for element in values { mix(value: element) }
        case .dictionary(let values):
            mix(word: 9)
            mix(word: UInt64(values.count))
            for (key, element) in values.sorted(by: { $0.key < $1.key }) {
                mix(text: key)
                mix(value: element)
            }
        }
    }

    /// The fingerprint of one entry: key, version and value (or tombstone).
    package static func of(_ entry: SettingEntry) -> UInt64 {
        var fingerprint = Fingerprint()
        fingerprint.mix(text: entry.key)
        fingerprint.mix(word: entry.version.timestamp.rawValue)
        withUnsafeBytes(of: entry.version.replica.uuid.uuid) { fingerprint.mix(bytes: $0) }
        if let value = entry.value { fingerprint.mix(value: value) } else { fingerprint.mix(word: 0) }
        return fingerprint.value
    }
}
