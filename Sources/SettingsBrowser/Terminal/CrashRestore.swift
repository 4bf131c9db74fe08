#if canImport(Glibc)
    import Glibc
#endif

/// What a fatal signal's handler needs to give the terminal back: the descriptor and the settings
/// to restore. Written only while no handler can run on it (before the handlers are set, and by
/// the one thread that enters and leaves the mode); read only by the handler.
private nonisolated(unsafe) var restoreDescriptor: Int32 = -1
private nonisolated(unsafe) var restoreAttributes = termios()

/// Restores the terminal when the browser crashes (a trap, a bad access, an abort), then lets
/// the signal end the process as it would have: the handler only calls `write`, `tcsetattr`,
/// `signal` and `raise`, which are async-signal-safe.
enum CrashRestore {
    /// The signals that end a process abnormally, which a Swift trap raises (SIGILL, SIGTRAP).
    static let fatalSignals = [SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS]

    /// Restores `attributes` on `descriptor` if the process dies of a fatal signal.
    static func arm(descriptor: Int32, attributes: termios) {
        restoreDescriptor = -1
        restoreAttributes = attributes
        restoreDescriptor = descriptor
        for signal in fatalSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let descriptor = restoreDescriptor
                if descriptor >= 0 {
                    let leave = TerminalSession.leaveSequence
                    _ = Glibc.write(descriptor, leave.utf8Start, leave.utf8CodeUnitCount)
                    _ = tcsetattr(descriptor, TCSANOW, &restoreAttributes)
                }
                Glibc.signal(number, SIG_DFL)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            // The handler puts the default action back itself (SA_RESETHAND does not fit sa_flags' Int32).
            action.sa_flags = 0
            sigaction(signal, &action, nil)
        }
    }

    /// The terminal is the shell's again: a crash has nothing to restore.
    static func disarm() {
        restoreDescriptor = -1
    }
}
