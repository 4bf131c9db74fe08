import Dispatch
import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// A running daemon's periodic work: pruning the history past its retention and collecting
/// tombstones past their lifetime. Each runs on a queue of its own; cancelled when released.
///
/// Unchecked Sendable: the timers are set once in `init`; `cancel()` is thread-safe.
final class Housekeeping: @unchecked Sendable {  // immutable after init
    private let timers: [any DispatchSourceTimer]

    /// Starts both timers for `settings`.
    init(settings: Settings, logger: SettingsLogger) {
        timers = [
            Self.pruneHistory(settings, logger: logger), Self.collectTombstones(settings, logger: logger),
        ]
    }

    deinit {
        for timer in timers { timer.cancel() }
    }

    /// Prunes the history every ten seconds, a small batch at a time, so the writer lock is never
    /// held long enough to delay a client.
    private static func pruneHistory(_ settings: Settings, logger: SettingsLogger) -> any DispatchSourceTimer
    {
        every(seconds: 10, label: "settingsd.history") {
            do throws(SettingsError) {
                while try settings.pruneHistory(batch: 200) > 0 { usleep(1_000) }
            } catch {
                logger.log(.warning, "pruning the history failed: \(error.message)")
            }
        }
    }

    /// Collects old tombstones every six hours (the store also does when it opens).
    private static func collectTombstones(_ settings: Settings, logger: SettingsLogger)
        -> any DispatchSourceTimer
    {
        every(seconds: 6 * 3600, label: "settingsd.tombstones") {
            do throws(SettingsError) {
                let collected = try settings.collectTombstones()
                if collected > 0 {
                    logger.log(.info, "collected \(collected) tombstone(s) past their lifetime")
                }
            } catch {
                logger.log(.warning, "collecting tombstones failed: \(error.message)")
            }
        }
    }

    private static func every(seconds: Int, label: String, _ work: @escaping @Sendable () -> Void)
        -> any DispatchSourceTimer
    {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        timer.schedule(deadline: .now() + .seconds(seconds), repeating: .seconds(seconds))
        timer.setEventHandler(handler: work)
        timer.resume()
        return timer
    }
}
