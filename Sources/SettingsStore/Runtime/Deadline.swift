#if canImport(Glibc)
    import Glibc
#endif

/// A point in time on the monotonic clock (`CLOCK_MONOTONIC`), for every duration the code
/// measures: time-outs, intervals, idle closes, retries and uptime. The wall clock may jump
/// either way (NTP, `date -s`, a resumed virtual machine); this one only moves forward.
/// Arithmetic saturates, so no duration, however large, traps: `.after(.seconds(Int64.max))`
/// is `distantFuture`.
package struct Deadline: Comparable, Hashable, Sendable {
    /// Nanoseconds on the monotonic clock.
    package let uptimeNanoseconds: UInt64

    package init(uptimeNanoseconds: UInt64) {
        self.uptimeNanoseconds = uptimeNanoseconds
    }

    /// Now.
    package static var now: Deadline {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Deadline(uptimeNanoseconds: UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec))
    }

    /// A deadline that never comes.
    package static let distantFuture = Deadline(uptimeNanoseconds: .max)

    /// `duration` from now (negative durations are now).
    package static func after(_ duration: Duration) -> Deadline {
        now + duration
    }

    /// This deadline moved by `duration`, saturating at either end of the clock.
    package static func + (deadline: Deadline, duration: Duration) -> Deadline {
        let nanoseconds = duration.saturatingNanoseconds
        if nanoseconds >= 0 {
            let (sum, overflow) = deadline.uptimeNanoseconds.addingReportingOverflow(UInt64(nanoseconds))
            return Deadline(uptimeNanoseconds: overflow ? .max : sum)
        }
        let magnitude = nanoseconds.magnitude
        return Deadline(
            uptimeNanoseconds: deadline.uptimeNanoseconds > magnitude
                ? deadline.uptimeNanoseconds - magnitude : 0)
    }

    /// The time from `earlier` to `later` (zero when `later` is not later).
    package static func - (later: Deadline, earlier: Deadline) -> Duration {
        guard later.uptimeNanoseconds > earlier.uptimeNanoseconds else { return .zero }
        let difference = later.uptimeNanoseconds - earlier.uptimeNanoseconds
        return .nanoseconds(Int64(clamping: difference))
    }

    package static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        lhs.uptimeNanoseconds < rhs.uptimeNanoseconds
    }

    /// Whether the deadline has come.
    package var hasPassed: Bool { Deadline.now >= self }

    /// The time left until the deadline (zero once it has passed).
    package var remaining: Duration { self - .now }

    /// The time left in whole milliseconds for `poll(2)`, rounded up so a wait never ends
    /// early: 0 once passed, -1 (for ever) for `distantFuture`, at most `Int32.max`.
    package var pollTimeout: Int32 {
        guard self != .distantFuture else { return -1 }
        let left = remaining.saturatingNanoseconds
        return Int32(clamping: (left + 999_999) / 1_000_000)
    }
}

extension Duration {
    /// The duration in nanoseconds, clamped to `Int64`.
    package var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (whole < 0 ? .min : .max) : sum
    }

    /// The duration in whole milliseconds, within `range` (a negative duration is its lower
    /// bound): how a configuration takes a duration from a caller, by a rule it documents.
    package func milliseconds(clampedTo range: ClosedRange<UInt64>) -> UInt64 {
        let nanoseconds = saturatingNanoseconds
        let milliseconds = nanoseconds <= 0 ? 0 : UInt64(nanoseconds / 1_000_000)
        return min(max(milliseconds, range.lowerBound), range.upperBound)
    }

    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A duration of `seconds` (a `Double` from a configuration or a command line), or nil when
    /// it is negative, not a number or infinite.
    package init?(checkedSeconds seconds: Double) {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        // Beyond some 292 years, nanoseconds no longer fit: what any wait would take as for ever.
        self = seconds >= 9.2e9 ? .seconds(Int64(9.2e9)) : .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
