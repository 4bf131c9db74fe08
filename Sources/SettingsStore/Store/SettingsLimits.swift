/// Size limits a store enforces on every write, like `NSUbiquitousKeyValueStore`'s, but yours to set.
///
/// A write that would break a limit throws `SettingsError` with code `limitExceeded`, naming the
/// limit, the key and the sizes, and changes nothing.
public struct SettingsLimits: Sendable, Equatable {
    /// The longest key name, in UTF-8 bytes (clamped to 1 … `KeyValidation.absoluteMaximumBytes`).
    public var maximumKeyBytes: Int {
        didSet { maximumKeyBytes = Self.clamped(maximumKeyBytes, to: 1...KeyValidation.absoluteMaximumBytes) }
    }
    /// The largest value, in stored bytes (`SettingValue.storageSize`; clamped to 1 byte … 1 GiB).
    public var maximumValueBytes: Int {
        didSet { maximumValueBytes = Self.clamped(maximumValueBytes, to: 1...Self.largestValueBytes) }
    }
    /// The most keys that may hold values at once, or nil for no limit (a negative count is 0).
    public var maximumKeyCount: Int? {
        didSet { maximumKeyCount = maximumKeyCount.map { max(0, $0) } }
    }
    /// The most bytes (keys plus stored values) all live keys may take together, or nil for no
    /// limit (a negative number is 0).
    public var maximumTotalBytes: Int? {
        didSet { maximumTotalBytes = maximumTotalBytes.map { max(0, $0) } }
    }

    /// The largest value any store may allow: 1 GiB, so that sizes derived from it (a frame
    /// that carries one, six bytes per stored byte) stay far from overflowing.
    static let largestValueBytes = 1 << 30

    /// Creates limits; numbers out of range are clamped as each property says.
    public init(
        maximumKeyBytes: Int, maximumValueBytes: Int, maximumKeyCount: Int? = nil,
        maximumTotalBytes: Int? = nil
    ) {
        self.maximumKeyBytes = Self.clamped(maximumKeyBytes, to: 1...KeyValidation.absoluteMaximumBytes)
        self.maximumValueBytes = Self.clamped(maximumValueBytes, to: 1...Self.largestValueBytes)
        self.maximumKeyCount = maximumKeyCount.map { max(0, $0) }
        self.maximumTotalBytes = maximumTotalBytes.map { max(0, $0) }
    }

    private static func clamped(_ value: Int, to range: ClosedRange<Int>) -> Int {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// Limits for a desktop: 256-byte keys, 1 MiB values, no cap on count or total. The default.
    public static let desktop = SettingsLimits(maximumKeyBytes: 256, maximumValueBytes: 1 << 20)

    /// iCloud key-value storage's limits: 64-byte keys, 1 MB in all, at most 1024 keys.
    public static let iCloud = SettingsLimits(
        maximumKeyBytes: 64, maximumValueBytes: 1_000_000, maximumKeyCount: 1024, maximumTotalBytes: 1_000_000
    )
}
