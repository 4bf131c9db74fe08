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
    /// sshd while it runs (a `SpawnedProcess`: sshd closes every descriptor it inherits).
    private var process: SpawnedProcess?

    /// Whether sshd and ssh are installed (`.ci/run` installs them).
    static let isAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")

    init() throws {
        directory = TemporaryDirectory("ssh")
        port = try LocalPorts.free()
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
        let process = try SpawnedProcess(["/usr/sbin/sshd", "-D", "-e", "-f", directory.file("sshd_config")])
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else { throw SettingsTestError("sshd exited at start (port \(port))") }
            if LocalPorts.accepts(port) { return }
            usleep(20_000)
        }
        throw SettingsTestError("sshd did not listen on 127.0.0.1:\(port) in 30 s")
    }

    /// Kills sshd and every session it started (`SIGKILL`), as a crash of the server would.
    func kill() {
        guard let process else { return }
        let sessions = DaemonProcess.run(["-P", String(process.pid)], through: "/usr/bin/pgrep")
        for session in sessions.output.split(separator: "\n").compactMap({ Int32($0) }) {
            Glibc.kill(session, SIGKILL)
        }
        process.kill()
        self.process = nil
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
}
