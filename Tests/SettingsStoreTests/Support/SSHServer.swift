import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real OpenSSH server (Debian's `openssh-server`) on 127.0.0.1 for one test: its own host
/// key, configuration and `authorized_keys` in a temporary folder, a client key it accepts, and
/// the `ssh` command line (`sshCommand`) that trusts exactly its host key. Logins are as the
/// user running the tests (root in CI). Killed, with its sessions, when released.
final class SSHServer {
    let directory: TemporaryDirectory
    let port: Int
    /// sshd's process id while it runs. Started with `posix_spawn`, not Foundation's `Process`:
    /// sshd closes every descriptor it inherits, and `Process` takes the close of the one it
    /// watches for an exit, then blocks its monitoring thread in `waitpid` (every other
    /// process's exit then goes unnoticed).
    private var pid: pid_t?

    /// Whether sshd and ssh are installed (`.ci/run` installs them).
    static let isAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")

    init() throws {
        directory = TemporaryDirectory("ssh")
        port = try Self.freePort()
        try Self.keygen(directory.file("host_key"))
        try Self.keygen(directory.file("client_key"))
        try Self.keygen(directory.file("other_key"))
        try authorize(key: "client_key")
        try trustHostKey("host_key")
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        let config = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(directory.file("host_key"))
            PidFile \(directory.file("sshd.pid"))
            AuthorizedKeysFile \(directory.file("authorized_keys"))
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PubkeyAuthentication yes
            PermitRootLogin prohibit-password
            AllowUsers \(user)
            LogLevel ERROR

            """
        try config.write(toFile: directory.file("sshd_config"), atomically: true, encoding: .utf8)
        // sshd refuses to start without its privilege separation folder.
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        try start()
    }

    deinit {
        kill()
    }

    /// The `ssh` command a link runs (`$SETTINGSD_SSH_COMMAND`): this server's host key only,
    /// the client key only, no configuration of the machine's.
    var sshCommand: String {
        "/usr/bin/ssh -F /dev/null -i \(directory.file("client_key")) -o IdentitiesOnly=yes"
            + " -o UserKnownHostsFile=\(directory.file("known_hosts")) -o GlobalKnownHostsFile=/dev/null"
            + " -o StrictHostKeyChecking=yes -o LogLevel=ERROR"
    }

    /// The `ssh://` address of a daemon's socket on this "remote machine".
    func address(socket: String) -> String {
        "ssh://\(String(cString: getpwuid(getuid()).pointee.pw_name))@127.0.0.1:\(port)\(socket)"
    }

    /// Starts sshd (again, after `kill()`) and waits until it accepts connections.
    func start() throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let arguments = ["/usr/sbin/sshd", "-D", "-e", "-f", directory.file("sshd_config")]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw SettingsTestError("cannot start sshd (error \(spawned))") }
        self.pid = pid
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0 else {
                self.pid = nil
                throw SettingsTestError("sshd exited at start (port \(port), status \(status))")
            }
            if Self.accepts(port: port) { return }
            usleep(20_000)
        }
        throw SettingsTestError("sshd did not listen on 127.0.0.1:\(port) in 30 s")
    }

    /// Kills sshd and every session it started (`SIGKILL`), as a crash of the server would.
    func kill() {
        guard let pid else { return }
        let sessions = DaemonProcess.run(["-P", String(pid)], through: "/usr/bin/pgrep")
        for session in sessions.output.split(separator: "\n").compactMap({ Int32($0) }) {
            Glibc.kill(session, SIGKILL)
        }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        self.pid = nil
    }

    /// Makes `key` (a key file in the folder) the only one the server accepts.
    func authorize(key: String) throws {
        let publicKey = try String(contentsOfFile: directory.file(key + ".pub"), encoding: .utf8)
        try publicKey.write(toFile: directory.file("authorized_keys"), atomically: true, encoding: .utf8)
    }

    /// Makes the client trust `key` (a key file in the folder) as the server's host key.
    func trustHostKey(_ key: String) throws {
        let publicKey = try String(contentsOfFile: directory.file(key + ".pub"), encoding: .utf8)
        let fields = publicKey.split(separator: " ")
        try "[127.0.0.1]:\(port) \(fields[0]) \(fields[1])\n".write(
            toFile: directory.file("known_hosts"), atomically: true, encoding: .utf8)
    }

    private static func keygen(_ path: String) throws {
        let made = DaemonProcess.run(
            ["-q", "-t", "ed25519", "-N", "", "-C", "settingsd-test", "-f", path],
            through: "/usr/bin/ssh-keygen")
        guard made.status == 0 else { throw SettingsTestError("ssh-keygen failed: \(made.error)") }
    }

    /// A TCP port nothing listens on now, from the kernel.
    private static func freePort() throws -> Int {
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
    private static func accepts(port: Int) -> Bool {
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
