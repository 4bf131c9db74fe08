import SettingsStore
import Synchronization

/// Counts the frames a connection has read and not yet handled, where the handling runs on a
/// queue other than the reading one: past a limit of frames or bytes, reading pauses until the
/// handler catches up, so a peer that sends faster than this side applies (or ignores its
/// acknowledgement window) waits in its socket instead of in this process's memory.
package final class FrameBacklog: Sendable {
    private struct Count {
        var frames = 0
        var bytes = 0
        var isPaused = false
    }

    /// Frames waiting, at most, before reading pauses.
    let frameLimit: Int
    /// Bytes waiting, at most, before reading pauses (one frame of any size is always taken).
    let byteLimit: Int
    private let count = Mutex(Count())

    package init(frameLimit: Int, byteLimit: Int) {
        self.frameLimit = frameLimit
        self.byteLimit = byteLimit
    }

    /// A frame of `bytes` was read; true when reading should pause now.
    package func admit(bytes: Int) -> Bool {
        count.withLock { count in
            count.frames += 1
            count.bytes += bytes
            guard !count.isPaused, count.frames >= frameLimit || count.bytes >= byteLimit else {
                return false
            }
            count.isPaused = true
            return true
        }
    }

    /// Whether reading may go on: false from an `admit` that paused it to the `release` that
    /// resumes it. The reading queue checks it again before it resumes, so a pause asked for
    /// meanwhile is never undone by an older resume.
    package var allowsReading: Bool { count.withLock { !$0.isPaused } }

    /// A frame of `bytes` was handled; true when reading, paused, should resume now.
    package func release(bytes: Int) -> Bool {
        count.withLock { count in
            count.frames -= 1
            count.bytes -= bytes
            guard count.isPaused, count.frames < frameLimit / 2, count.bytes < byteLimit / 2 else {
                return false
            }
            count.isPaused = false
            return true
        }
    }
}
