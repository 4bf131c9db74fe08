#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system's real-time clock, for what every layer stamps: versions, history, contact times.
/// A store's own stamps go through `SettingsConfiguration.clock`, which tests replace.
enum WallClock {
    /// Milliseconds since 1970.
    @Sendable static func milliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) * 1000 + UInt64(max(0, now.tv_nsec)) / 1_000_000
    }
}
