package import Dispatch
import SettingsStore
import SettingsWire

/// The queues a replica connection's frames run through once read: one parses them, in order,
/// and the session's own handles them, in order, one at a time.
///
/// The connection's queue (or the daemon's event loop) only reads and writes the socket. While
/// the session applies one batch, the next is read and parsed: when the reading waited for each
/// apply, an initial sync of 100,000 keys between two daemons spent about a fifth of its time
/// waiting for its next batch, and on the daemon's loop every client waited with it.
///
/// Frames read but not yet handled are bounded (`FrameBacklog`): past the bound reading pauses,
/// so a peer that sends faster than this side applies waits in its socket, not in this memory.
package final class SessionQueues: Sendable {
    /// The session's executor.
    package let session: DispatchQueue
    private let decoding: DispatchQueue
    private let backlog = FrameBacklog(
        frameLimit: 4 * SyncSession.window, byteLimit: 4 * SyncSession.maximumFrameBytes)
    /// Asks the reading side to read again after a pause (called on the session's queue); the
    /// reading side resumes only if `allowsReading` still says so when it gets there.
    private let resume: @Sendable (SessionQueues) -> Void

    package init(label: String, resume: @escaping @Sendable (_ queues: SessionQueues) -> Void) {
        session = DispatchQueue(label: label + "-session")
        decoding = DispatchQueue(label: label + "-decoder")
        self.resume = resume
    }

    /// Whether the reading side may read: false while too many frames wait.
    package var allowsReading: Bool { backlog.allowsReading }

    /// Takes a frame of `bytes` bytes read now: `decode` runs on the parsing queue, then what it
    /// returns on the session's. Returns whether the reading side should pause now.
    package func submit(bytes: Int, decode: @escaping @Sendable () -> @Sendable () -> Void) -> Bool {
        let pause = backlog.admit(bytes: bytes)
        decoding.async { [self] in
            let handle = decode()
            session.async { [self] in
                handle()
                if backlog.release(bytes: bytes) { resume(self) }
            }
        }
        return pause
    }
}
