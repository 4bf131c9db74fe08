import Synchronization

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A wall clock off from the real one by an offset a test can change (a jump back or forward).
final class SkewedClock: Sendable {
    private let offset: Atomic<Int64>

    init(offsetMilliseconds: Int64 = 0) {
        offset = Atomic(offsetMilliseconds)
    }

    /// Moves the clock by `milliseconds` (negative: backwards).
    func jump(by milliseconds: Int64) {
        offset.add(milliseconds, ordering: .relaxed)
    }

    /// The reading now, in milliseconds since 1970.
    func now() -> UInt64 {
        UInt64(clamping: Int64(SettingsConfiguration.systemClock()) + offset.load(ordering: .relaxed))
    }

    /// The clock as a store's configuration takes it.
    var read: @Sendable () -> UInt64 {
        { [self] in now() }
    }
}

/// An hour and a year in milliseconds.
let hour: Int64 = 3_600_000
let year: Int64 = 365 * 24 * hour
