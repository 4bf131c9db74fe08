import CLinux
import Dispatch
import SettingsStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One `ssh` process carrying an SSH peer's stream: its standard input and output are one end
/// of a socket pair, its standard error is kept (the last few kilobytes) to say why it failed.
/// Two threads of its own wait for it, so it never lingers as a zombie and nothing polls.
final class SSHProcess: Sendable {
    /// The process id.
    let pid: pid_t
    private let state = Mutex(Output())
    private let exited = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)

    private struct Output {
        var errorBytes: [UInt8] = []
        var status: Int32?
    }

    /// How much of the standard error is kept.
    static let keptErrorBytes = 8_192

    /// Starts `arguments` (an absolute executable first) with `stream` as its standard input and
    /// output; the caller closes its copy of `stream` afterwards.
    static func spawn(_ arguments: [String], stream: Int32) throws(SettingsError) -> SSHProcess {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            throw SettingsError(.io, "cannot make a pipe for ssh's errors (errno \(errno))")
        }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stream, 0)
        posix_spawn_file_actions_adddup2(&actions, stream, 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        // Nothing else of the daemon's (its socket, its database) reaches ssh.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // ssh starts with no signal blocked, whatever this thread blocks (Dispatch's threads
        // block SIGTERM), and in a process group of its own, so a terminal's ^C reaches the daemon
        // alone and the daemon ends the link.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            throw SettingsError(
                .io, "cannot start \(arguments[0]): \(String(cString: strerror(spawned)))", path: arguments[0]
            )
        }
        let process = SSHProcess(pid: pid)
        do throws(SettingsError) {
            try process.watch(errors: pipe[0])
        } catch {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(pipe[0])
            throw error
        }
        return process
    }

    private init(pid: pid_t) {
        self.pid = pid
    }

    /// What the process wrote to its standard error (the last `keptErrorBytes`), trimmed.
    var errorOutput: String {
        let bytes = state.withLock { $0.errorBytes }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// Waits up to `timeout` for the process to exit, then kills it; returns its wait status
    /// (nil if it had to be killed and has not been reaped yet), once its standard error is read
    /// to the end (or a second more passed: a child of ssh may hold it open).
    func finish(within timeout: Duration) -> Int32? {
        if exited.wait(timeout: .now() + timeout.seconds) == .timedOut {
            kill(pid, SIGKILL)
            _ = exited.wait(timeout: .now() + 1)
        }
        _ = drained.wait(timeout: .now() + 1)
        return state.withLock { $0.status }
    }

    /// Keeps reading the standard error, and reaps the process, each on a thread of its own.
    private func watch(errors fd: Int32) throws(SettingsError) {
        try DetachedThread.start("ssh error reader") { [self] in
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { output in
                    output.errorBytes += buffer[..<count]
                    if output.errorBytes.count > Self.keptErrorBytes {
                        output.errorBytes.removeFirst(output.errorBytes.count - Self.keptErrorBytes)
                    }
                }
            }
            close(fd)
            drained.signal()
        }
        try DetachedThread.start("ssh reaper") { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            state.withLock { $0.status = status }
            exited.signal()
        }
    }
}
