import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settingsd run`: reads its options into a `DaemonConfiguration` and runs a `SettingsDaemon`
/// (which stops cleanly on SIGINT or SIGTERM and reloads its policy on SIGHUP).
struct RunCommand {
    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) {
        self.arguments = arguments
    }

    func run() throws -> Int32 {
        _ = try arguments.positionals(0...0)
        let database = arguments.value(RunOptions.database) ?? SettingsPaths.database
        let socket = arguments.value(RunOptions.socket) ?? SettingsPaths.socket
        var configuration = DaemonConfiguration(databasePath: database, socketPath: socket)
        configuration.server = ServerConfiguration(
            socketPath: socket, maximumFrameBytes: try arguments.value(RunOptions.maxFrame) ?? 8 << 20,
            allowedUIDs: Set(try arguments.values(RunOptions.allowUID)),
            logger: SettingsLogger(minimumLevel: try arguments.value(RunOptions.logLevel) ?? .info))
        let idle = try arguments.value(RunOptions.idleTimeout) ?? 300
        configuration.server.idleTimeout =
            idle > 0 ? .milliseconds(Int64(clamping: UInt64(idle * 1000))) : nil
        let schemaDirectories = arguments.values(RunOptions.schemas)
        if !schemaDirectories.isEmpty { configuration.schemaDirectories = schemaDirectories }
        if let systemDirectory = arguments.value(RunOptions.systemDirectory) {
            configuration.systemDirectory = systemDirectory
        }
        configuration.isStrict = arguments.isSet(RunOptions.strictSchemas)
        configuration.store.durability = try arguments.value(RunOptions.durability) ?? .normal
        if let days = try arguments.value(RunOptions.tombstoneDays) {
            configuration.store.tombstoneLifetime = .seconds(days * 86_400)
        }
        if let keep = try arguments.value(RunOptions.historyKeep) {
            configuration.store.history.keep = .milliseconds(Int64(clamping: keep))
        }
        if let count = try arguments.value(RunOptions.historyMax) {
            configuration.store.history.maximumRecords = count
        }
        configuration.peers = try Self.channels(
            for: arguments.values(RunOptions.peer),
            remoteSettingsd: arguments.value(RunOptions.remoteSettingsd))
        let plainFolders = arguments.values(RunOptions.plainFolder)
        configuration.folders = arguments.values(RunOptions.folder) + plainFolders
        configuration.plainFolders = Set(plainFolders)
        let keyStore = try SyncKeyStores.standard()
        configuration.keyring = try keyStore.load()
        if configuration.keyring != nil { configuration.keyringLocation = keyStore.location }
        configuration.dconfDirs = arguments.values(RunOptions.dconf).map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        configuration.flatpak = try Self.flatpakApps(arguments)
        let namespace = arguments.value(RunOptions.hubNamespace)
        let hubURL = arguments.value(RunOptions.hub) ?? SettingsPaths.hubFromEnvironment
        if hubURL == nil, namespace != nil {
            throw UsageError("--hub-namespace needs --hub (or $SETTINGSD_HUB)", command: "run")
        }
        let stall = try arguments.value(RunOptions.hubStallTimeout)
        if hubURL == nil, stall != nil {
            throw UsageError("--hub-stall-timeout needs --hub (or $SETTINGSD_HUB)", command: "run")
        }
        configuration.hub = hubURL.map {
            HubConfiguration(
                url: $0, namespace: namespace, stallTimeout: .milliseconds(Int64((stall ?? 30) * 1000)))
        }
        configuration.replicaName = arguments.value(RunOptions.name)
        let daemon = try SettingsDaemon(configuration: configuration)
        try daemon.run {
            Output.line(
                "settingsd \(SettingsdVersion.current) listening on \(socket) (database \(database), replica \(daemon.settings.replicaID))"
            )
        }
    }

    /// `90d`, `12h`, `30m`, `45s` or a plain number of seconds, in milliseconds.
    /// The channels `--peer` names: `ssh://` addresses over SSH, anything else a socket path.
    static func channels(for peers: [String], remoteSettingsd: String?) throws -> [any ReplicaChannel] {
        try peers.map { peer throws -> any ReplicaChannel in
            guard SSHAddress.isSSH(peer) else { return UnixSocketChannel(path: peer) }
            do throws(SettingsError) {
                return SSHChannel(try SSHAddress(peer), remoteCommand: remoteSettingsd ?? "settingsd")
            } catch {
                throw UsageError(error.message, command: "run")
            }
        }
    }

    @Sendable static func milliseconds(_ text: String) -> UInt64? {
        let units: [Character: Double] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        let unit = text.last.flatMap { units[$0] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number >= 0, number.isFinite,
            number * (unit ?? 1) < 1e12
        else { return nil }
        return UInt64(number * (unit ?? 1) * 1000)
    }

    /// The Flatpak apps `--flatpak` mirrors: every app installed or with a keyfile, or those
    /// `--flatpak-app` names, less those `--flatpak-exclude` names.
    private static func flatpakApps(_ arguments: ParsedArguments) throws(UsageError) -> (
        apps: [String], layout: FlatpakLayout
    )? {
        let only = arguments.values(RunOptions.flatpakApp)
        let excluded = Set(arguments.values(RunOptions.flatpakExclude))
        guard arguments.isSet(RunOptions.flatpak) else {
            if !only.isEmpty || !excluded.isEmpty {
                throw UsageError("--flatpak-app and --flatpak-exclude need --flatpak", command: "run")
            }
            return nil
        }
        for app in only + excluded where !FlatpakLayout.isAppID(app) {
            throw UsageError("'\(app)' is not a Flatpak app id (like org.gnome.TextEditor)", command: "run")
        }
        let layout = FlatpakLayout.current
        let apps = (only.isEmpty ? layout.apps() : only).filter { !excluded.contains($0) }
        return (apps, layout)
    }
}
