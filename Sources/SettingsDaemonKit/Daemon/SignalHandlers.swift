import Dispatch
import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP delivered on a Dispatch queue instead of interrupting a random thread.
enum SignalHandlers {
    /// Blocks the three signals in this thread and every thread started after it, before any is:
    /// they then stay pending until the Dispatch sources read them. A thread that did not block
    /// them (the parked main thread, the server's loop) would take a signal and drop it, since
    /// its default action is ignored.
    static func blockDelivery() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, number) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Ignores the default actions and calls `handler` once per signal; keep the result alive.
    static func install(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "settingsd.signals")
        return [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
