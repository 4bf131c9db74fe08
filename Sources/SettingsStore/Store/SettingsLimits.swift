/// Size limits a store enforces on every write, like `NSUbiquitousKeyValueStore`'s, but yours to set.
///
/// A write that would break a limit throws `SettingsError` with code `limitExceeded`, naming the
/// limit, the key and the sizes, and changes nothing.
public struct SettingsLimits: Sendable, Equatable {
    /// The longest key name, in UTF-8 bytes.
    public var maximumKeyBytes: Int
    /// The largest value, in stored bytes (`SettingValue.storageSize`).
    public var maximumValueBytes: Int
    /// The most keys that may hold values at once, or nil for no limit.
    public var maximumKeyCount: Int?
    /// The most bytes (keys plus stored values) all live keys may take together, or nil for no limit.
    public var maximumTotalBytes: Int?

    /// Creates limits.
    public init(
        maximumKeyBytes: Int, maximumValueBytes: Int, maximumKeyCount: Int? = nil,
        maximumTotalBytes: Int? = nil
    ) {
        self.maximumKeyBytes = maximumKeyBytes
        self.maximumValueBytes = maximumValueBytes
        self.maximumKeyCount = maximumKeyCount
        self.maximumTotalBytes = maximumTotalBytes
    }

    /// Limits for a desktop: 256-byte keys, 1 MiB values, no cap on count or total. The default.
    public static let desktop = SettingsLimits(maximumKeyBytes: 256, maximumValueBytes: 1 << 20)

    /// iCloud key-value storage's limits: 64-byte keys, 1 MB in all, at most 1024 keys.
    public static let iCloud = SettingsLimits(
        maximumKeyBytes: 64, maximumValueBytes: 1_000_000, maximumKeyCount: 1024, maximumTotalBytes: 1_000_000
    )
}
