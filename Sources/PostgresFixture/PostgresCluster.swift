import CLinux
import Foundation
import SettingsStore
import SettingsSync
import Synchronization

/// A private PostgreSQL cluster for the hub tests and `settings-bench hub`: `initdb` into a temporary folder (as the
/// `postgres` user when the tests run as root, since PostgreSQL refuses root), Unix socket only,
/// started once per test run and stopped when the run ends.
///
/// Roles log in with passwords (scram-sha-256); `postgres` is trusted locally and owns the hub
/// schema (`settingsd hub init`).
public final class PostgresCluster: Sendable {
    /// Why the tests cannot have a cluster here, or nil when they can.
    public static let unavailableReason: String? = {
        guard PostgresCluster.binaries != nil else {
            return "PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install postgresql)"
        }
        return nil
    }()

    /// Whether hub tests run: PostgreSQL is installed, or CI is set (then a missing one fails them).
    public static var testsEnabled: Bool {
        unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// The cluster of this test run, started on first use.
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.withLock { cluster in
            if let cluster { return cluster }
            let started = try PostgresCluster()
            cluster = started
            return started
        }
    }

    private static let sharedCluster = Mutex<PostgresCluster?>(nil)

    /// The folder holding the data directory, the log and the socket.
    public let folder: String
    private let bin: String

    /// The hub's database.
    public static let database = "settings"

    private init() throws {
        guard let bin = Self.binaries else {
            throw SettingsError(.io, Self.unavailableReason ?? "PostgreSQL is not installed")
        }
        self.bin = bin
        folder = "/tmp/sdt-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o755)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres", folder]) }
        try runAsOwner(
            "\(bin)/initdb",
            ["-D", "\(folder)/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        try "local all postgres trust\nlocal replication postgres trust\nlocal all all scram-sha-256\n".write(
            toFile: "\(folder)/data/pg_hba.conf", atomically: false, encoding: .utf8)
        try start()
        Self.stopAtExit(pgCtl: "\(bin)/pg_ctl", data: "\(folder)/data", folder: folder)
        try psql("CREATE DATABASE \(Self.database)", database: "postgres")
    }

    /// Stops the cluster when the process exits (the run's shared one and the private ones, a
    /// failover test's standby among them), and removes its folder.
    private static func stopAtExit(pgCtl: String, data: String, folder: String) {
        let arguments =
            getuid() == 0
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", pgCtl, "-D", data, "-m", "immediate", "stop"]
            : [pgCtl, "-D", data, "-m", "immediate", "stop"]
        FixtureCleanup.atExit {
            // At exit nothing can report a failure: a cluster already stopped is the usual case.
            try? run(arguments[0], Array(arguments.dropFirst()))
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// A cluster of the caller's own, not the run's shared one: for a test that stops, restores or
    /// fails over its hub. It is stopped when the run ends.
    public static func makePrivate() throws -> PostgresCluster {
        try PostgresCluster()
    }

    /// Makes this server a streaming standby of `primary`: stops it, replaces its data with a
    /// base backup of `primary` (which writes the standby's connection to it), and starts it.
    public func becomeStandby(of primary: PostgresCluster) throws {
        try? stop(immediate: true)
        try runAsOwner("/bin/rm", ["-rf", "\(folder)/data"])
        try runAsOwner(
            "\(bin)/pg_basebackup",
            [
                "-h", primary.folder, "-U", "postgres", "-D", "\(folder)/data", "-R", "--no-sync",
                "--checkpoint=fast",
            ])
        try start()
    }

    /// Promotes this standby to a primary, waiting until it accepts writes.
    public func promote() throws {
        try runAsOwner("\(bin)/pg_ctl", ["-D", "\(folder)/data", "-w", "promote"])
    }

    /// Writes the schema `settingsd` of `database` to `file` (`pg_dump`, custom format).
    /// `plain`: as SQL text, which a test can search.
    public func dumpHub(to file: String, database: String = PostgresCluster.database, plain: Bool = false)
        throws
    {
        try Self.run(
            "\(bin)/pg_dump",
            [
                "-h", folder, "-U", "postgres", "-d", database, "-n", "settingsd", plain ? "-Fp" : "-Fc",
                "-f", file,
            ])
    }

    /// Replaces the schema `settingsd` of `database` with the one `dumpHub` wrote to `file`, as
    /// an administrator restoring a backup would (sessions that use it wait, then see the old state).
    public func restoreHub(from file: String, database: String = PostgresCluster.database) throws {
        try dropHub(database: database)
        try Self.run("\(bin)/pg_restore", ["-h", folder, "-U", "postgres", "-d", database, file])
    }

    /// Drops the schema `settingsd` of `database` under running daemons, trying again when
    /// PostgreSQL chose the drop as a deadlock's victim (it locks every object of the schema, in
    /// an order a push may cross), as an administrator would.
    public func dropHub(database: String = PostgresCluster.database) throws {
        for attempt in 1... {
            do {
                return try psql("DROP SCHEMA settingsd CASCADE", database: database)
            } catch  where attempt < 5 && "\(error)".contains("deadlock detected") {
                continue
            }
        }
    }

    /// Starts the server (after `stop`, or a crash).
    public func start() throws {
        try runAsOwner(
            "\(bin)/pg_ctl",
            [
                "-D", "\(folder)/data", "-l", "\(folder)/log", "-w", "-o",
                "-k \(folder) -c listen_addresses='' -c fsync=off -c max_connections=200", "start",
            ])
    }

    /// Stops the server; `immediate` is the crash-like mode.
    public func stop(immediate: Bool = false) throws {
        try runAsOwner(
            "\(bin)/pg_ctl", ["-D", "\(folder)/data", "-m", immediate ? "immediate" : "fast", "-w", "stop"])
    }

    /// SIGKILLs the postmaster, as a crash would, and waits until it is gone.
    public func killPostmaster() throws {
        let pidLine = try String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8)
            .split(separator: "\n").first
        guard let pidLine, let pid = Int32(pidLine) else {
            throw SettingsError(.io, "no postmaster.pid in \(folder)/data")
        }
        kill(pid, SIGKILL)
        while kill(pid, 0) == 0 { usleep(10_000) }
    }

    /// A connection string for `user` (a password included when given).
    public func conninfo(
        user: String = "postgres", password: String? = nil, database: String = PostgresCluster.database
    )
        -> String
    {
        var text = "host=\(folder) dbname=\(database) user=\(user)"
        if let password { text += " password=\(password)" }
        return text
    }

    /// A new login role with a password, named after `prefix`; returns its name and password.
    public func makeRole(_ prefix: String) throws -> (name: String, password: String) {
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        let password = "pw-\(UUID().uuidString.prefix(12))"
        // A hub (schema 2 on) serves only roles granted settingsd_user, as `settingsd hub init` says.
        try psql(
            """
            CREATE ROLE \(name) LOGIN PASSWORD '\(password)';
            DO $$ BEGIN
                IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'settingsd_user') THEN
                    GRANT settingsd_user TO \(name);
                END IF;
            END $$;
            """)
        return (name, password)
    }

    /// A new, empty database (no hub schema); returns its name.
    public func makeDatabase() throws -> String {
        let name = "db_\(UUID().uuidString.prefix(8).lowercased())"
        try psql("CREATE DATABASE \(name)", database: "postgres")
        return name
    }

    /// Runs SQL as the superuser, failing on the first error.
    public func psql(_ sql: String, database: String = PostgresCluster.database) throws {
        try Self.run(
            "/usr/bin/psql",
            ["-h", folder, "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", sql])
    }

    private func runAsOwner(_ executable: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            try Self.run(executable, arguments)
        }
    }

    /// Runs a program and waits for it, with `posix_spawn` and `waitpid`: its output goes to a
    /// file, not a pipe, because `pg_ctl start` leaves the server holding what it inherited.
    public static func run(_ executable: String, _ arguments: [String]) throws {
        let outputPath = NSTemporaryDirectory() + "sdt-pg-output-\(UUID().uuidString.prefix(8))"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process's is inherited: a server `pg_ctl start` leaves running would
        // hold it for its whole life. Foundation's `Process` learns that a child exited when the
        // last copy of a socket it gave that child closes, so a server holding a copy made every
        // `waitUntilExit` of a test's daemon started meanwhile wait for ever.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The child starts with no signal blocked, whatever this thread blocks (a server that
        // inherited a blocked SIGTERM would never hear its stop).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw SettingsError(.io, "cannot run \(executable) (error \(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw SettingsError(.io, "\(executable) \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }

    /// The folder holding initdb and pg_ctl (`/usr/lib/postgresql/<version>/bin`), newest first.
    private static let binaries: String? = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: "\(bin)/initdb") { return bin }
        }
        return nil
    }()
}
