import SettingsStore
import Synchronization

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// Collects change events delivered on any thread.
final class EventRecorder: Sendable {
    private let events = Mutex<[SettingsChange]>([])

    var handler: @Sendable (SettingsChange) -> Void {
        { [weak self] change in self?.events.withLock { $0.append(change) } }
    }

    var all: [SettingsChange] { events.withLock { $0 } }
    var keys: [[String]] { all.map(\.keys) }
    var reasons: [ChangeReason] { all.map(\.reason) }
}
