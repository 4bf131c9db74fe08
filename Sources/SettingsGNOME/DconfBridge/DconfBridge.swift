import Dispatch
package import SettingsStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Mirrors dconf dirs (`/org/gnome/`) and the store both ways, live: what the user or an app
/// writes to dconf becomes a local change of the store (a reset becomes a deletion), and what
/// the store receives (from peers, the hub, the command line, a revert, an import) is written
/// to dconf with its GVariant type, so GSettings apps see it at once.
///
/// Only the user's own dconf values are read, never site defaults. Keys the site's profile
/// locks are not written. A change never bounces back: the bridge's own writes are recognised by
/// dconf's tag, and values are compared before anything is written. Keys are compared three
/// ways, with the state they last agreed on (kept beside the database), so a daemon restarted
/// after a crash or an outage takes what changed on either side while it was away.
///
/// ```swift
/// let bridge = DconfBridge(settings: settings, dirs: ["/org/gnome/"], statePath: path + "-dconf")
/// try bridge.start()
/// bridge.status.keysFromDconf
/// bridge.stop()
/// ```
package final class DconfBridge: Sendable {
    /// The store mirrored.
    package let settings: Settings
    /// The dconf dirs mirrored, each ending in `/`.
    package let dirs: [String]
    private let statePath: String?
    private let logger: SettingsLogger?
    private let running = Mutex<Running?>(nil)
    private let statusState: Mutex<DconfBridgeStatus>
    /// Keys the store changed that the bridge has not yet compared, and whether a comparison is due.
    private let dirty = Mutex<(paths: Set<String>, isScheduled: Bool)>(([], false))

    private struct Running: Sendable {
        let connection: DconfConnection
        let engine: BridgeEngine
        var observation: SubscriptionToken?
    }

    /// A bridge between `settings` and the dconf dirs `dirs`; nothing runs until `start()`.
    ///
    /// - Parameter statePath: Where the states both sides last agreed on are kept (nil: memory).
    package init(settings: Settings, dirs: [String], statePath: String?, logger: SettingsLogger? = nil) {
        self.settings = settings
        self.dirs = dirs
        self.statePath = statePath
        self.logger = logger
        statusState = Mutex(DconfBridgeStatus(dirs: dirs))
    }

    deinit {
        stop()
    }

    /// What the bridge has done and is doing.
    package var status: DconfBridgeStatus {
        statusState.withLock { $0 }
    }

    /// Connects to dconf, compares every key under the dirs with the store (taking what changed
    /// on either side) and watches both sides; returns once the first comparison is done.
    ///
    /// - Throws: `invalidKey` for a dir that is not a dconf dir; `io` when libdconf cannot be
    ///   loaded or the state file cannot be opened.
    package func start() throws(SettingsError) {
        guard running.withLock({ $0 == nil }) else { return }
        for dir in dirs { try DconfPath.validateDir(dir) }
        try Self.checkSessionBus()
        let engine = BridgeEngine(
            settings: settings, dirs: dirs, states: try BridgedStates(path: statePath), logger: logger,
            status: { [weak self] update in self?.statusState.withLock { update(&$0) } })
        let connection = try DconfConnection(watching: dirs) { client, paths, tag in
            engine.dconfChanged(paths, tag: tag, client: client)
        }
        running.withLock { $0 = Running(connection: connection, engine: engine) }
        // Changes the store announces from here on are compared after the first comparison.
        let prefixes = dirs.flatMap { dir in
            (try? DconfPath.keyPrefix(forDir: dir)).map { [$0, dir] } ?? [dir]
        }
        let observation = settings.observe(.prefixes(prefixes)) { [weak self] change in
            self?.storeChanged(change.keys)
        }
        running.withLock { $0?.observation = observation }
        let first = DispatchSemaphore(value: 0)
        connection.perform { client in
            engine.compareAll(client: client)
            first.signal()
        }
        first.wait()
        statusState.withLock { $0.isRunning = true }
        logger?.log(.info, "dconf bridge: mirroring \(dirs.joined(separator: ", "))")
    }

    /// Stops watching both sides; changes made meanwhile are compared at the next start.
    package func stop() {
        guard
            let stopped = running.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        stopped.observation?.cancel()
        stopped.connection.stop()
        statusState.withLock { $0.isRunning = false }
    }

    /// dconf reaches `dconf-service` through the session bus: without one, every write would fail.
    private static func checkSessionBus() throws(SettingsError) {
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS"), address.pointee != 0 { return }
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? "/run/user/\(getuid())"
        guard access("\(runtime)/bus", F_OK) == 0 else {
            throw SettingsError(
                .io,
                "the dconf bridge needs the user's session bus: DBUS_SESSION_BUS_ADDRESS is unset and \(runtime)/bus does not exist (run it in the desktop session, or as a systemd user service)"
            )
        }
    }

    /// Queues the changed keys for one comparison on the dconf thread; a burst becomes one change set.
    private func storeChanged(_ keys: [String]) {
        let paths = keys.compactMap(BridgeEngine.path(forKey:))
        guard !paths.isEmpty,
            let (connection, engine) = running.withLock({ $0.map { ($0.connection, $0.engine) } })
        else { return }
        let schedule = dirty.withLock { state in
            state.paths.formUnion(paths)
            defer { state.isScheduled = true }
            return !state.isScheduled
        }
        guard schedule else { return }
        connection.perform { [weak self] client in
            guard let self else { return }
            let paths = self.dirty.withLock { state in
                defer { state = ([], false) }
                return state.paths
            }
            engine.compare(paths.sorted(), client: client)
        }
    }
}
