import Foundation
import SettingsSync
import Synchronization

/// What the fixtures' servers leave running when the process ends: each cluster and pooler
/// registers how to stop it, and the actions run at exit, the last registered first (a pooler
/// before the cluster behind it).
///
/// A process that a signal ends runs no exit handlers: `stopOnSignals()` turns SIGINT and
/// SIGTERM into an exit, so a benchmark stopped by hand stops its servers too.
public enum FixtureCleanup {
    private static let actions = Mutex<[@Sendable () -> Void]>([])
    private static let signalSources = Mutex<[any DispatchSourceSignal]>([])

    /// Runs `action` when the process exits.
    static func atExit(_ action: @escaping @Sendable () -> Void) {
        let isFirst = actions.withLock { actions in
            actions.append(action)
            return actions.count == 1
        }
        guard isFirst else { return }
        atexit {
            // Taken out, so that an exit while they run (a second signal) runs each once at most.
            let actions = FixtureCleanup.actions.withLock { actions in
                defer { actions = [] }
                return actions
            }
            for action in actions.reversed() { action() }
        }
    }

    /// Makes SIGINT and SIGTERM end the process by `exit` (status 128 and the signal's number),
    /// which runs the registered actions, instead of ending it at once.
    public static func stopOnSignals() {
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { exit(128 + number) }
                source.resume()
                sources.append(source)
            }
        }
    }
}
