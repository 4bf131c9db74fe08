package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// A self-pipe that wakes a thread blocked in `poll(2)` from another thread: the daemon's event
/// loop (posted tasks), a hub link (a local commit, `stop()`, together with the hub's socket).
package final class WakePipe: Sendable {
    /// The end to poll for reading; `drain()` it once it is readable.
    package let readEnd: Int32
    private let writeEnd: Int32

    package init() throws(SettingsError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw SettingsError(.io, "cannot create a wake-up pipe (errno \(errno))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the waiter (a full pipe already will).
    package func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Sleeps up to `seconds`, or until signalled; returns whether it was signalled.
    @discardableResult
    package func wait(seconds: Double) -> Bool {
        var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Self.milliseconds(seconds)) > 0 else { return false }
        drain()
        return true
    }

    /// Sleeps up to `seconds`, until signalled, or until `socket` is readable; returns whether
    /// the socket is.
    package func wait(for socket: Int32?, seconds: Double) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let socket, socket >= 0 { fds.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), Self.milliseconds(seconds))
        guard ready > 0 else { return false }
        if fds[0].revents != 0 { drain() }
        return fds.count > 1 && fds[1].revents != 0
    }

    /// `seconds` as `poll(2)`'s timeout: never negative, at most a day.
    private static func milliseconds(_ seconds: Double) -> Int32 {
        Int32(max(0, min(seconds, 86_400)) * 1000)
    }

    /// Empties the pipe, so the next `signal()` wakes the poll again.
    package func drain() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &sink, sink.count) > 0 {}
    }
}
