#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SettingValue {
    /// The deepest nesting of arrays and dictionaries a stored value may have: `[[1]]` nests 2
    /// deep, a scalar 0. Every write path refuses deeper values, so that any stored value fits in
    /// every frame that carries it (its JSON form nests at most `2 × 24 + 1` levels, well inside
    /// the wire's 64 with the envelope of an event, a list, an export or a replica batch).
    package static let maximumNestingDepth = 24

    /// How deeply arrays and dictionaries nest in this value (0 for a scalar).
    package var nestingDepth: Int {
        switch self {
        case .array(let values): 1 + (values.lazy.map(\.nestingDepth).max() ?? 0)
        case .dictionary(let values): 1 + (values.values.lazy.map(\.nestingDepth).max() ?? 0)
        default: 0
        }
    }

    /// Whether two stored states (nil: none, or a tombstone) are the same to the bit.
    static func identical(_ a: SettingValue?, _ b: SettingValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.isIdentical(to: b)
        default: false
        }
    }

    /// Whether the two values are the same to the bit: what is stored, synced and announced.
    ///
    /// Unlike `==`, `0.0` and `-0.0` differ, a NaN is identical to the same NaN, and strings
    /// compare by their UTF-8 bytes, not by canonical equivalence.
    public func isIdentical(to other: SettingValue) -> Bool {
        switch (self, other) {
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.data(let a), .data(let b)): a == b
        case (.array(let a), .array(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            // The canonical encoding sorts keys and writes their bytes: equal bytes, identical values.
            a.count == b.count && encoded() == other.encoded()
        default: false
        }
    }

    /// Throws `limitExceeded` unless the value nests at most `maximumNestingDepth` deep.
    func checkNesting(key: String) throws(SettingsError) {
        let depth = nestingDepth
        guard depth <= Self.maximumNestingDepth else {
            throw SettingsError(
                .limitExceeded,
                "value for '\(key.debugDescriptionTruncated)' nests \(depth) levels deep, over the limit of \(Self.maximumNestingDepth)",
                key: key)
        }
    }
}
