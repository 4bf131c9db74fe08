package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the pipe signals are reported through; written only by the handler.
private nonisolated(unsafe) var signalWriteEnd: Int32 = -1

/// Signals as bytes on a pipe the event loop polls with its other descriptors: a window resize
/// (SIGWINCH), a request to end (SIGTERM, SIGHUP, SIGINT from `kill`), a continue after a stop
/// (SIGCONT). The handler only writes one byte, which is async-signal-safe.
package final class SignalPipe {
    /// The descriptor to poll for reading.
    package let descriptor: Int32
    private let writeEnd: Int32

    /// The signals it reports.
    package static let reported = [SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGCONT]

    /// Starts reporting `reported` signals (one pipe per process).
    ///
    /// - Throws: `ioError` when no pipe can be made.
    package init() throws(SettingsError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw SettingsError(.io, "cannot make a pipe for signals: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
        signalWriteEnd = writeEnd
        for signal in Self.reported {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = Glibc.write(signalWriteEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(SA_RESTART)
            sigaction(signal, &action, nil)
        }
    }

    deinit {
        for signal in Self.reported { Glibc.signal(signal, SIG_DFL) }
        signalWriteEnd = -1
        close(descriptor)
        close(writeEnd)
    }

    /// The signals that arrived since the last call, in order.
    package func drain() -> [Int32] {
        var signals: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            signals += buffer.prefix(count).map { Int32($0) }
        }
        return signals
    }
}
