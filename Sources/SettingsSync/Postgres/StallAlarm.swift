import Dispatch
import SettingsStore
import SettingsWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Bounds a libpq call that waits on its socket with no time-out of its own (`PQfn`): unless
/// disarmed within `seconds`, it shuts the socket down, so the call returns with the connection
/// broken instead of waiting for ever on a frozen server.
///
/// It acts only while armed, under the same lock that disarms it, so it never touches a socket
/// after the call returned: the descriptor cannot have been closed and reused meanwhile.
final class StallAlarm: Sendable {
    private let state = Mutex<(armed: Bool, rang: Bool)>((true, false))

    /// Arms the alarm for `socket`, to ring after `delay` (Dispatch's deadlines are monotonic).
    package init(socket: Int32, after delay: Duration) {
        // Weakly: a call that returned releases its alarm at once, not when the time runs out.
        let nanoseconds = Int(clamping: delay.saturatingNanoseconds)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            [weak self] in
            self?.state.withLock { state in
                guard state.armed else { return }
                state.rang = true
                _ = shutdown(socket, Int32(SHUT_RDWR))
            }
        }
    }

    /// Disarms the alarm; true when it rang first (the call was cut short, or answered just as
    /// the time ran out, and the connection is broken either way).
    func disarm() -> Bool {
        state.withLock { state in
            state.armed = false
            return state.rang
        }
    }
}
