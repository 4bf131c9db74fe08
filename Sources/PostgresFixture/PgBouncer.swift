import Foundation
import SettingsStore
import SettingsSync

/// A private PgBouncer in front of a `PostgresCluster`, in transaction pooling, for the pooled hub
/// tests and `settings-bench fleet`: its own folder, a Unix socket only, started and stopped by
/// its owner (`stop()`, or the object's release), as Debian's `pgbouncer` package installs it.
///
/// Clients log in with the passwords in its user list (SCRAM), and it logs in to PostgreSQL with
/// the same ones, as a deployment that keeps one `userlist.txt` does.
public final class PgBouncer: Sendable {
    /// Why there can be no PgBouncer here, or nil when there can.
    public static let unavailableReason: String? =
        FileManager.default.isExecutableFile(atPath: executable)
        ? nil : "PgBouncer is not installed (Debian: apt-get install pgbouncer)"

    private static let executable = "/usr/sbin/pgbouncer"

    /// The folder holding the configuration, the user list, the log and the socket.
    public let folder: String
    /// The port its socket is named after (`.s.PGSQL.PORT` in `folder`).
    public let port: Int
    private let cluster: PostgresCluster
    private let settings: [String: String]

    /// Writes the configuration for `users` (name and password) and starts it.
    ///
    /// - Parameter settings: `pgbouncer.ini` settings over the defaults (transaction pooling, a
    ///   pool of 10 server connections per user and database, at most 1,000 clients).
    public init(
        cluster: PostgresCluster, users: [(name: String, password: String)],
        settings: [String: String] = [:]
    ) throws {
        if let reason = Self.unavailableReason { throw SettingsError(.io, reason) }
        self.cluster = cluster
        folder = "/tmp/sdt-pgb-\(UUID().uuidString.prefix(8))"
        port = 6432
        self.settings = settings
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o777)
        try write(users: users)
        try writeConfiguration()
        try start()
        // A pooler still running when the process ends (a benchmark stopped by hand, a test
        // that kept it) would hold its port for the next run.
        let (folder, port) = (folder, port)
        FixtureCleanup.atExit {
            Self.stop(folder: folder, port: port)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A connection string for `user` through the pooler (`extra` appended as it is); every
    /// database of the cluster is reachable by its name.
    public func conninfo(
        user: String, password: String, database: String = PostgresCluster.database, extra: String = ""
    ) -> String {
        "host=\(folder) port=\(port) dbname=\(database) user=\(user) password=\(password)"
            + (extra.isEmpty ? "" : " \(extra)")
    }

    /// Replaces the user list and makes a running pooler read it again.
    public func write(users: [(name: String, password: String)]) throws {
        let lines = users.map { "\"\($0.name)\" \"\($0.password)\"\n" }.joined()
        try lines.write(toFile: "\(folder)/userlist.txt", atomically: true, encoding: .utf8)
        if let pid = runningPID { kill(pid, SIGHUP) }
    }

    /// Starts the pooler (after `stop()` or `kill()`), waiting until its socket accepts and its
    /// process id is written (the daemon writes it apart from opening the socket).
    public func start() throws {
        try PostgresCluster.run(Self.executable, ["-d", "-q", "\(folder)/pgbouncer.ini"])
        for _ in 0..<500 {
            if FileManager.default.fileExists(atPath: "\(folder)/.s.PGSQL.\(port)"), runningPID != nil {
                return
            }
            usleep(10_000)
        }
        throw SettingsError(
            .timeout, "PgBouncer did not open its socket and write its pid in \(folder) within 5 s")
    }

    /// Stops the pooler at once (SIGTERM: every client connection closes), waiting until it is gone.
    public func stop() {
        Self.stop(folder: folder, port: port)
    }

    private static func stop(folder: String, port: Int) {
        guard let pid = runningPID(folder: folder) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<500 where isRunning(pid) { usleep(10_000) }
        if isRunning(pid) { kill(pid, SIGKILL) }
        unlink("\(folder)/pgbouncer.pid")
        unlink("\(folder)/.s.PGSQL.\(port)")
    }

    /// The process id, while it runs.
    public var runningPID: Int32? { Self.runningPID(folder: folder) }

    private static func runningPID(folder: String) -> Int32? {
        guard let text = try? String(contentsOfFile: "\(folder)/pgbouncer.pid", encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), isRunning(pid)
        else { return nil }
        return pid
    }

    /// Whether `pid` runs: a zombie has exited (PgBouncer daemonizes, so whoever adopts it reaps
    /// it, in its own time).
    private static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].dropFirst().first != "Z"
    }

    private func writeConfiguration() throws {
        var values = [
            "listen_addr": "", "listen_port": String(port), "unix_socket_dir": folder,
            "unix_socket_mode": "0777", "auth_type": "scram-sha-256", "auth_file": "\(folder)/userlist.txt",
            "pool_mode": "transaction", "default_pool_size": "10", "max_client_conn": "1000",
            "logfile": "\(folder)/pgbouncer.log", "pidfile": "\(folder)/pgbouncer.pid",
            "admin_users": "postgres", "server_reset_query": "", "server_check_delay": "1",
        ]
        if getuid() == 0 { values["user"] = "postgres" }
        values.merge(settings) { _, new in new }
        let general = values.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)\n" }.joined()
        let text = """
            [databases]
            * = host=\(cluster.folder)

            [pgbouncer]
            \(general)
            """
        try text.write(toFile: "\(folder)/pgbouncer.ini", atomically: true, encoding: .utf8)
        if getuid() == 0 { try PostgresCluster.run("/bin/chown", ["-R", "postgres", folder]) }
    }
}
