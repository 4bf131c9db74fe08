/// A hybrid logical clock reading: wall-clock milliseconds in the high 48 bits, a counter in the low 16.
///
/// Timestamps order like the wall clock when clocks agree, and still order causally when they do
/// not: a replica never issues a stamp lower than one it has issued or received.
public struct HybridTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The packed form, as stored and sent.
    package let rawValue: UInt64

    /// Wraps a packed value.
    package init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Packs milliseconds since 1970 and a counter.
    package init(milliseconds: UInt64, counter: UInt16) {
        self.rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// Milliseconds since 1970 (UTC).
    public var milliseconds: UInt64 { rawValue >> 16 }

    /// The logical counter within the millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// The next timestamp up (the largest one has none and stays itself).
    var successor: HybridTimestamp {
        HybridTimestamp(rawValue: rawValue == .max ? rawValue : rawValue + 1)
    }

    /// Stamps from outside (a peer, the hub) must have fewer milliseconds than this, 2^46 (the
    /// year 4199): the packed stamp then stays below 2^62, so it orders alike as a signed
    /// `bigint` in PostgreSQL and as a `UInt64` here, and every successor a write may need exists.
    package static let maximumMilliseconds: UInt64 = 1 << 46

    /// The zero timestamp, below every real one.
    package static let zero = HybridTimestamp(rawValue: 0)

    /// Packed order.
    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `milliseconds.counter`.
    public var description: String { "\(milliseconds).\(counter)" }
}
