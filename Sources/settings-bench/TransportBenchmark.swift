import Foundation
import SettingsDaemonClient
import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The ways of syncing beside socket peers, measured in `settings-bench sync` beside them: an
/// SSH peer through a private sshd on loopback, and a folder two daemons share (a syncer of no
/// latency: both write and read the same files).
extension SyncBenchmark {
    /// Initial sync over SSH, beside the same over the socket (`socketSeconds`).
    func ssh(
        into report: inout Report, keys: Int, from a: BenchDaemon, scratch: Scratch, socketSeconds: Double
    )
        throws
    {
        guard access("/usr/sbin/sshd", X_OK) == 0 else {
            progress("ssh: no /usr/sbin/sshd (openssh-server), skipped")
            return
        }
        let server = try BenchSSHServer(folder: scratch.folder("ssh").path)
        var environment = ProcessInfo.processInfo.environment
        environment["SETTINGSD_SSH_COMMAND"] = server.sshCommand
        let logins = (0..<5).map { _ in measureSeconds { server.login() } }.sorted()
        progress("starting daemon S with --peer ssh://…A (sshd on 127.0.0.1:\(server.port))")
        let clock = ContinuousClock()
        let start = clock.now
        let s = try BenchDaemon(
            binary: binary, scratch: scratch, name: "ssh",
            arguments: ["--peer", server.address(socket: a.socket), "--remote-settingsd", binary],
            environment: environment)
        try waitForEqualDigests(a.socket, s.socket)
        report.time(
            "initial sync, \(keys / 1000)k keys, over SSH (loopback)", ours: (clock.now - start).seconds,
            peer: socketSeconds, peerName: "the same over the socket", target: .ratio(atMost: 1.5))
        report.seconds("  of which an ssh login (ssh HOST true, median of 5)", logins[2], target: .reported)
    }

    /// Through a folder: initial sync, set → watch event, an idle link's wake-ups, the folder's size.
    func folder(into report: inout Report, keys: Int, scratch: Scratch) throws {
        let folder = scratch.folder("Sync").path
        let first = try BenchDaemon(
            binary: binary, scratch: scratch, name: "folder1", arguments: ["--folder", folder])
        progress("folder: loading \(keys) keys into daemon F1")
        try load(keys, into: first)
        let writer = try BlockingClient(socketPath: first.socket, timeout: 60)
        while try DaemonStatus(fields: writer.request(.status)).folders.first?.pendingUp != 0 {
            usleep(1_000)
        }
        progress("folder: starting daemon F2 on the same folder")
        let clock = ContinuousClock()
        let start = clock.now
        let second = try BenchDaemon(
            binary: binary, scratch: scratch, name: "folder2", arguments: ["--folder", folder])
        try waitForEqualDigests(first.socket, second.socket)
        report.seconds(
            "initial sync, \(keys / 1000)k keys, through a folder", (clock.now - start).seconds,
            target: .atMost(2, "<= 2 s"))

        let watcher = try BlockingClient(socketPath: second.socket, timeout: 10)
        try watcher.request(.watch(filter: .keys(["folder.latency"])))
        var latencies: [Double] = []
        for index in 0..<(quick ? 200 : 2_000) {
            let sent = clock.now
            try writer.request(.set(key: "folder.latency", value: .integer(Int64(index))))
            _ = try watcher.nextEvent()
            latencies.append((clock.now - sent).seconds)
        }
        report.latency(
            "set on F1 → watch event on F2, through the folder", sorted: latencies.sorted(),
            target: .percentiles(p50: 0.050, p99: 0.100))

        let seconds = quick ? 5.0 : 60.0
        progress("folder: F2 idle for \(Int(seconds)) s, beside a daemon with no link")
        let bare = try BenchDaemon(binary: binary, scratch: scratch, name: "bare")
        usleep(1_000_000)
        let (linked, alone) = (second.process.processIdentifier, bare.process.processIdentifier)
        let before = (ThreadCounters(pid: linked), ThreadCounters(pid: alone))
        usleep(UInt32(seconds * 1_000_000))
        let after = (ThreadCounters(pid: linked), ThreadCounters(pid: alone))
        let withFolder = after.0.totalWakeups - before.0.totalWakeups
        let without = after.1.totalWakeups - before.1.totalWakeups
        report.quantity(
            "idle daemon with a folder link: wake-ups beyond a daemon with none, in \(Int(seconds)) s",
            Double(max(0, withFolder - without)), unit: "wake-ups", format: "%.0f", peer: Double(without),
            peerName: "a daemon with no link (its own)", target: .atMost(0, "0"))

        let export = try writer.request(.export)
        let exportBytes = (export["document"]?.serialized().utf8.count).map(Double.init) ?? 0
        // Right after a compaction a replica's folder holds its snapshot and its state file; its
        // batches then grow until they hold as many bytes again, and it compacts.
        let replicaFolders = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let compacted = replicaFolders.reduce(0) { total, replica in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + replica)) ?? []
            return files.filter { $0.hasPrefix("s-") || $0 == "state.json" }.reduce(total) { sum, name in
                var info = stat()
                return sum + (stat(folder + "/" + replica + "/" + name, &info) == 0 ? Int(info.st_size) : 0)
            }
        }
        report.quantity(
            "folder size right after a compaction, two replicas, \(keys / 1000)k keys",
            Double(compacted) / 1_048_576, unit: "MiB", format: "%.1f MiB", peer: exportBytes / 1_048_576,
            peerName: "settingsd export of them", target: .ratio(atMost: 2))
        report.quantity(
            "folder size now (with the batches since that compaction)",
            Double(Self.bytes(under: folder)) / 1_048_576,
            unit: "MiB", format: "%.1f MiB", target: .reported)
    }

    /// The bytes of every file under `folder`.
    static func bytes(under folder: String) -> Int {
        let names = FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []
        return names.reduce(0) { total, name in
            var info = stat()
            return total
                + (stat(folder + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
                    ? Int(info.st_size) : 0)
        }
    }
}

/// A private sshd on 127.0.0.1 for the SSH measurement: its own host key, a client key it
/// accepts, the `ssh` command that trusts exactly its host key. Killed when released.
final class BenchSSHServer {
    let folder: String
    let port: Int
    private let pid: pid_t

    init(folder: String) throws {
        self.folder = folder
        port = Int.random(in: 20_000..<60_000)
        for key in ["host_key", "client_key"] {
            guard
                ChildProcess.run([
                    "/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", "\(folder)/\(key)",
                ]) == 0
            else { throw SettingsError(.io, "ssh-keygen failed") }
        }
        let clientKey = try String(contentsOfFile: "\(folder)/client_key.pub", encoding: .utf8)
        try clientKey.write(toFile: "\(folder)/authorized_keys", atomically: true, encoding: .utf8)
        let hostKey = try String(contentsOfFile: "\(folder)/host_key.pub", encoding: .utf8).split(
            separator: " ")
        try "[127.0.0.1]:\(port) \(hostKey[0]) \(hostKey[1])\n".write(
            toFile: "\(folder)/known_hosts", atomically: true, encoding: .utf8)
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        try """
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(folder)/host_key
        PidFile \(folder)/sshd.pid
        AuthorizedKeysFile \(folder)/authorized_keys
        StrictModes no
        UsePAM no
        PasswordAuthentication no
        PermitRootLogin prohibit-password
        AllowUsers \(user)
        LogLevel ERROR

        """.write(toFile: "\(folder)/sshd_config", atomically: true, encoding: .utf8)
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = ["/usr/sbin/sshd", "-D", "-e", "-f", "\(folder)/sshd_config"]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid = pid_t()
        guard posix_spawn(&pid, arguments[0], &actions, nil, &cArguments, environ) == 0 else {
            throw SettingsError(.io, "cannot start sshd")
        }
        self.pid = pid
        for _ in 0..<300 {
            if ChildProcess.run(["/usr/bin/ssh"] + sshOptions + ["-p", String(port), "127.0.0.1", "true"])
                == 0
            {
                return
            }
            usleep(20_000)
        }
        throw SettingsError(.timeout, "sshd did not answer on 127.0.0.1:\(port)")
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    private var sshOptions: [String] {
        [
            "-F", "/dev/null", "-i", "\(folder)/client_key", "-o", "IdentitiesOnly=yes", "-o",
            "UserKnownHostsFile=\(folder)/known_hosts", "-o", "GlobalKnownHostsFile=/dev/null", "-o",
            "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
        ]
    }

    /// Logs in and runs `true`: what every SSH link pays before its first byte.
    func login() {
        ChildProcess.run(["/usr/bin/ssh"] + sshOptions + ["-p", String(port), "127.0.0.1", "true"])
    }

    /// `$SETTINGSD_SSH_COMMAND` for the daemon that dials.
    var sshCommand: String {
        "/usr/bin/ssh " + sshOptions.joined(separator: " ")
    }

    func address(socket: String) -> String {
        "ssh://\(String(cString: getpwuid(getuid()).pointee.pw_name))@127.0.0.1:\(port)\(socket)"
    }
}
