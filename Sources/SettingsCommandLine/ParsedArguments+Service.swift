import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

extension ParsedArguments {
    /// Where the command's requests go: the database at `--db`, else the daemon at `--socket` (or
    /// the default), else the database at `$SETTINGSD_DB` when no daemon holds it. Commands that
    /// only read open the file read-only: nothing is created, and a file this user cannot write
    /// can still be read.
    func service(forWriting: Bool) throws(SettingsError) -> any SettingsService {
        if let database = value(Options.database) {
            return try direct(database, forWriting: forWriting)
        }
        let given = value(Options.socket)
        let socket = given ?? SettingsPaths.socket
        if given == nil, let database = SettingsPaths.databaseFromEnvironment {
            // The variable names the daemon's database too: while a daemon holds it, use the daemon,
            // but only one that serves that very file (another daemon's answers would be about
            // another database).
            do throws(SettingsError) {
                return try direct(database, forWriting: forWriting)
            } catch  where error.code == .databaseInUse {
                let client = try daemon(socket: socket)
                let served = try client.status().database
                guard let served, Self.sameFile(served, database) else {
                    throw SettingsError(
                        .databaseInUse,
                        "'\(database)' ($SETTINGSD_DB) is held by another process, and the daemon on '\(socket)' serves \(served.map { "'\($0)'" } ?? "another database"); use --socket with the daemon that serves it",
                        path: database)
                }
                return client
            }
        }
        return try daemon(socket: socket)
    }

    /// Whether two paths name one file (the same device and inode).
    private static func sameFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        return stat(first, &a) == 0 && stat(second, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    private func direct(_ database: String, forWriting: Bool) throws(SettingsError) -> DirectClient {
        var configuration = SettingsConfiguration()
        configuration.isReadOnly = !forWriting
        // The same schemas, system defaults and locks as a daemon started without options.
        configuration.policy = try SettingsPolicy.load(
            schemaDirectories: SettingsPolicy.defaultSchemaDirectories,
            systemDirectory: SettingsPolicy.defaultSystemDirectory, extensions: .gnome)
        do throws(SettingsError) {
            return DirectClient(settings: try Settings(path: database, configuration: configuration))
        } catch  where error.code == .databaseInUse {
            throw SettingsError(
                .databaseInUse, "\(error.message); while a daemon holds it, use its socket (without --db)",
                path: database)
        }
    }

    /// A connection to the daemon at `--socket` (or the default), with a helpful error when none runs;
    /// a `timeout` of 0 waits for answers forever.
    func daemon(socket: String? = nil, timeout: Double = 30) throws(SettingsError) -> BlockingClient {
        let socket = socket ?? value(Options.socket) ?? SettingsPaths.socket
        do throws(SettingsError) {
            return try BlockingClient(socketPath: socket, timeout: timeout)
        } catch  where error.code == .daemonNotRunning {
            throw SettingsError(
                .daemonNotRunning,
                "no settingsd daemon is listening on '\(socket)'; start one with 'settingsd run' (or use --db PATH to work on a database file directly)",
                path: socket)
        }
    }
}
