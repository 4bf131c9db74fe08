import SettingsStore

/// Where the CLI's requests go: a running daemon, or a database opened directly (`--db`).
protocol RequestTarget {
    func request(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue]
}

extension BlockingClient: RequestTarget {}

extension DirectClient: RequestTarget {}

extension ParsedArguments {
    /// The daemon at `--socket` (or the default), or the database at `--db`.
    func requestTarget() throws(SettingsError) -> any RequestTarget {
        if let database = value("--db") {
            do throws(SettingsError) {
                return DirectClient(settings: try Settings(path: database))
            } catch  where error.code == .databaseInUse {
                throw SettingsError(
                    .databaseInUse,
                    "\(error.message); while a daemon holds it, use its socket (without --db)",
                    path: database)
            }
        }
        return try daemon()
    }

    /// A connection to the daemon at `--socket` (or the default), with a helpful error when none runs;
    /// a `timeout` of 0 waits for answers forever.
    func daemon(timeout: Double = 30) throws(SettingsError) -> BlockingClient {
        let socket = value("--socket") ?? SettingsPaths.socket
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
