import Dispatch
import SettingsDaemonClient
package import SettingsGNOME
public import SettingsStore
public import SettingsSync
import SettingsWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A whole settings daemon: the store, its replicator, the server on the socket, the schema and
/// system folders watched for changes, links to peers and a hub, and the housekeeping timers.
/// `settingsd run` parses its arguments into a `DaemonConfiguration` and runs one; an app that
/// embeds a daemon gets everything `run` does.
///
/// ```swift
/// let daemon = try SettingsDaemon(configuration: DaemonConfiguration())
/// try daemon.start()          // serving; peers and the hub sync in the background
/// try daemon.settings.set("dark", forKey: "ui.theme")
/// daemon.stop()               // links stop, clients finish, the store closes
/// ```
public final class SettingsDaemon: Sendable {
    private struct Running {
        var links: [ReplicaLink]
        var folders: [FolderLink]
        var hub: HubLink?
        var housekeeping: Housekeeping
        var policy: PolicyWatcher
    }

    /// What the daemon serves and how.
    public let configuration: DaemonConfiguration
    /// The store it serves.
    public let settings: Settings
    /// Its replication: sessions with replicas that connect, links it dials, their status.
    public let replicator: Replicator
    /// The server on the socket.
    package let server: SettingsServer
    /// The dconf bridge, when `dconfDirs` names any dir.
    package let dconf: DconfBridge?
    /// The Flatpak keyfile bridge, when `flatpak` names apps.
    package let flatpak: FlatpakBridge?
    private let running = Mutex<Running?>(nil)

    /// Opens the store (reading the schema and system folders first) and prepares the server;
    /// nothing listens until `start()`.
    ///
    /// - Throws: `databaseInUse` when a daemon answers on the socket or another store holds the
    ///   database, a policy error naming the file, or what opening the store throws. The socket is
    ///   checked before the database is opened, so a daemon that cannot start creates no file.
    public init(configuration: DaemonConfiguration) throws(SettingsError) {
        try SettingsServer.checkAvailable(socketPath: configuration.server.socketPath)
        // A hub URL that cannot be used stops the daemon before it creates the database.
        try configuration.hub?.validate()
        var store = configuration.store
        store.policy = try SettingsPolicy.load(
            schemaDirectories: configuration.schemaDirectories,
            systemDirectory: configuration.systemDirectory, isStrict: configuration.isStrict,
            extensions: configuration.schemaExtensions)
        for warning in store.policy.warnings { configuration.logger.log(.warning, warning) }
        let settings = try Self.open(configuration.databasePath, configuration: store)
        self.configuration = configuration
        self.settings = settings
        self.replicator = Replicator(settings: settings, logger: configuration.logger)
        for dir in configuration.dconfDirs { try DconfPath.validateDir(dir) }
        let dconf =
            configuration.dconfDirs.isEmpty
            ? nil
            : DconfBridge(
                settings: settings, dirs: configuration.dconfDirs,
                statePath: configuration.databasePath + "-dconf", logger: configuration.logger)
        self.dconf = dconf
        let flatpak = configuration.flatpak.map { flatpak in
            FlatpakBridge(
                settings: settings, layout: flatpak.layout, apps: flatpak.apps,
                statePath: configuration.databasePath + "-flatpak", logger: configuration.logger)
        }
        self.flatpak = flatpak
        var server = configuration.server
        server.syncKey = configuration.keyring.map { keyring in
            "key \(keyring.keyID), kept in \(configuration.keyringLocation ?? "this process")"
        }
        self.server = try SettingsServer(
            replicator: replicator, configuration: server, dconf: dconf, flatpak: flatpak)
    }

    /// Stops everything still running: a released daemon never keeps serving.
    deinit {
        stop()
    }

    /// Starts serving on the socket, mirroring the dconf dirs, watching the policy folders,
    /// dialling the peers and the hub, and the housekeeping timers.
    ///
    /// - Throws: What `SettingsServer.start()` throws, or `invalidValue` for a hub URL that
    ///   cannot be parsed; nothing is left running then.
    public func start() throws(SettingsError) {
        if let name = configuration.replicaName ?? Self.hostName() {
            settings.setName(name, ofReplica: settings.replicaID)
        }
        let hub = try configuration.hub.map { hub throws(SettingsError) in
            var hub = hub
            hub.keyring = configuration.keyring
            return try replicator.sync(withHub: hub)
        }
        do throws(SettingsError) {
            try server.start()
        } catch {
            hub?.stop()
            throw error
        }
        if configuration.server.socketPath == SettingsPaths.defaultSocket,
            let squatted = SettingsPaths.squattedSharedFolder()
        {
            configuration.logger.log(
                .warning,
                "\(squatted.path) belongs to uid \(squatted.owner) (or others may write it): someone may be posing as settingsd there; listening on \(configuration.server.socketPath) instead, where clients look next; remove that folder"
            )
        }
        warnIfBridgingSharedNamespace()
        let policy = PolicyWatcher(
            schemaDirectories: configuration.schemaDirectories,
            systemDirectory: configuration.systemDirectory, isStrict: configuration.isStrict,
            extensions: configuration.schemaExtensions, settings: settings, logger: configuration.logger)
        let links = configuration.peers.map { replicator.sync(over: $0) }
        let folders = configuration.folders.map { folder in
            replicator.sync(
                withFolder: folder, keyring: configuration.keyring,
                isPlain: configuration.plainFolders.contains(folder))
        }
        do throws(SettingsError) {
            if dconf != nil || flatpak != nil { waitForFirstSync(timeout: Self.firstSyncWait) }
            try dconf?.start()
            try flatpak?.start()
        } catch {
            dconf?.stop()
            for link in links { link.stop() }
            for folder in folders { folder.stop() }
            hub?.stop()
            server.stop()
            throw error
        }
        running.withLock {
            $0 = Running(
                links: links, folders: folders, hub: hub,
                housekeeping: Housekeeping(settings: settings, logger: configuration.logger),
                policy: policy)
        }
    }

    /// Warns when the dconf bridge mirrors into a hub namespace other than the login role's own:
    /// other roles may write there, and what they write reaches this desktop (commands stay
    /// local by the built-in list, docs/SCHEMA.md).
    private func warnIfBridgingSharedNamespace() {
        guard !configuration.dconfDirs.isEmpty, let hub = configuration.hub, let namespace = hub.namespace,
            let conninfo = try? HubURL(hub.url).checkedConninfo(),
            PostgresConnectionString.loginRole(conninfo) != namespace
        else { return }
        configuration.logger.log(
            .warning,
            "the dconf bridge mirrors \(configuration.dconfDirs.joined(separator: ", ")) through hub namespace \(namespace), which other roles may write: their GNOME settings reach this desktop (keys that hold commands stay local; see docs/SCHEMA.md)"
        )
    }

    /// Reads the schema and system folders again and applies them (what SIGHUP does); a broken
    /// file keeps the rules in force and is logged.
    public func reloadPolicy(because reason: String) {
        running.withLock { $0?.policy }?.reload(because: reason)
    }

    /// Stops the links, lets the server's clients finish, and closes the store. Calling it again
    /// does nothing.
    public func stop() {
        let stopping = running.withLock { state in
            defer { state = nil }
            return state
        }
        guard let running = stopping else { return }
        dconf?.stop()
        flatpak?.stop()
        for link in running.links { link.stop() }
        for folder in running.folders { folder.stop() }
        running.hub?.stop()
        server.stop()
        settings.close()
    }

    /// Runs the daemon as a process's main job: SIGINT and SIGTERM stop it and exit the process
    /// with status 0, SIGHUP reloads the policy; `ready` runs once it serves, and systemd is told
    /// so (`Type=notify`, `ServiceManager`). Never returns.
    ///
    /// Call it before starting other threads: it blocks the three signals in the calling thread
    /// and those started after it, so that only its handlers receive them.
    public func run(ready: () -> Void = {}) throws(SettingsError) -> Never {
        // A closed stderr pipe (`settingsd run 2>&1 | head`) must fail a write, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        // Clients are turned away inside a reserve of this limit (`DescriptorBudget`).
        DescriptorBudget.raiseSoftLimit()
        SignalHandlers.blockDelivery()
        let logger = configuration.logger
        // Handlers go in before the socket exists: a SIGTERM sent as soon as a client can connect
        // must already stop the daemon cleanly.
        let manager = ServiceManager()
        let signals = SignalHandlers.install { [self] signal in
            guard signal != SIGHUP else {
                manager.notify("RELOADING=1")
                reloadPolicy(because: "SIGHUP")
                manager.notify("READY=1")
                return
            }
            logger.log(.info, "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
            manager.notify("STOPPING=1")
            stop()
            exit(0)
        }
        try start()
        ready()
        manager.notify("READY=1\nMAINPID=\(getpid())\nSTATUS=serving on \(configuration.server.socketPath)")
        // Not `dispatchMain()`: it ends the main thread, and libdispatch's exit path then opens an
        // eventfd for the main queue, which aborts the process (SIGILL) when clients have taken
        // every descriptor by then (`ulimit -n`); nothing in the daemon uses the main queue.
        withExtendedLifetime(signals) { () -> Never in
            while true { pause() }
        }
    }

    /// The machine's host name, as `hostname` prints it; nil when it has none.
    static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// How long the dconf bridge's first comparison waits for the first exchange with the hub
    /// and the peers.
    static let firstSyncWait = 10.0

    /// Waits until the hub links have been through a round both ways and the peer links have
    /// caught up, or `timeout` seconds: a machine joining the fleet then holds the fleet's values
    /// before the dconf bridge compares, so its own dconf values do not pass for newer ones.
    private func waitForFirstSync(timeout: Double) {
        guard configuration.hub != nil || !configuration.peers.isEmpty || !configuration.folders.isEmpty
        else {
            return
        }
        let deadline = Deadline.after(.milliseconds(Int64(timeout * 1000)))
        while !deadline.hasPassed {
            let hubs = replicator.hubs.allSatisfy(\.isConnected)
            let links = replicator.links.allSatisfy { $0.state == .syncing }
            let peers = replicator.peers.allSatisfy { $0.pendingIncoming == 0 }
            // A folder link is watching once it has read what the folder held at its start.
            let folders = replicator.folders.allSatisfy(\.isWatching)
            if hubs, links, peers, folders { return }
            usleep(10_000)
        }
        configuration.logger.log(
            .warning,
            "the dconf bridge compares before the first sync finished (hub, peers or folders unreachable)")
    }

    private static func open(_ database: String, configuration: SettingsConfiguration) throws(SettingsError)
        -> Settings
    {
        do throws(SettingsError) {
            return try Settings(path: database, configuration: configuration)
        } catch {
            guard error.code == .databaseInUse else { throw error }
            throw SettingsError(
                .databaseInUse, "\(error.message); is another settingsd running on it?", path: database)
        }
    }
}
