import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server a test starts (sshd, Syncthing) with `posix_spawn`, not Foundation's `Process`: a
/// daemon that closes the descriptors it inherits closes the one `Process` watches for an exit,
/// and `Process` then blocks its monitoring thread in `waitpid` for that daemon, so no other
/// child's exit is noticed until it ends. Output goes to `log` (or nowhere); killed when released.
final class SpawnedProcess {
    let pid: pid_t
    private var status: Int32?

    init(_ arguments: [String], environment: [String: String]? = nil, log: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No signal blocked, whatever this thread blocks.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables =
            (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [
                nil
            ]
        defer { variables.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, variables)
        guard spawned == 0 else { throw SettingsTestError("cannot start \(arguments[0]) (error \(spawned))") }
        self.pid = pid
    }

    deinit {
        kill()
    }

    /// Whether it still runs.
    var isRunning: Bool {
        guard status == nil else { return false }
        var result: Int32 = 0
        if waitpid(pid, &result, WNOHANG) == pid {
            status = result
            return false
        }
        return true
    }

    /// `SIGKILL`, and waits for it.
    func kill() {
        guard status == nil else { return }
        Glibc.kill(pid, SIGKILL)
        var result: Int32 = 0
        while waitpid(pid, &result, 0) < 0, errno == EINTR {}
        status = result
    }
}

/// TCP ports on 127.0.0.1 for the servers tests start.
enum LocalPorts {
    /// A port nothing listens on now, from the kernel.
    static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw SettingsTestError("no free TCP port (errno \(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
