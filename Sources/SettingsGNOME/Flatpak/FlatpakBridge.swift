import Dispatch
package import SettingsStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Mirrors Flatpak apps' settings keyfiles and the store both ways, live, with the dconf
/// bridge's rules (`BridgeEngine`): the user's own values only, three-way comparison with the
/// state both last agreed on (kept in `STATE/APP_ID`), no echo (values are compared before
/// anything is written), deletions carried as such, locks and mandatory policies holding a key at
/// their value. An app's keys live under `flatpak.APP_ID.` (`FlatpakSchemaSource` types them).
///
/// ```swift
/// let layout = FlatpakLayout.current
/// let bridge = FlatpakBridge(settings: settings, layout: layout, apps: layout.apps(), statePath: path)
/// try bridge.start()
/// ```
package final class FlatpakBridge: Sendable {
    /// The store mirrored.
    package let settings: Settings
    /// Where the apps are.
    package let layout: FlatpakLayout
    /// The apps mirrored.
    package let apps: [String]
    private let statePath: String
    private let logger: SettingsLogger?
    private let queue = DispatchQueue(label: "settingsd.flatpak")
    private let running = Mutex<Running?>(nil)
    private let statusState: Mutex<DconfBridgeStatus>

    private struct Running: @unchecked Sendable {  // engines and sides are used on `queue` only
        var apps: [String: (engine: BridgeEngine, keyfile: AppKeyfile)]
        let watcher: KeyfileWatcher
        var observation: SubscriptionToken?
    }

    /// A bridge of `apps` (Flatpak app ids) in `layout`; `statePath` is the folder of the agreed
    /// states (one file per app). Nothing runs until `start()`.
    package init(
        settings: Settings, layout: FlatpakLayout, apps: [String], statePath: String,
        logger: SettingsLogger? = nil
    ) {
        self.settings = settings
        self.layout = layout
        self.apps = apps.filter(FlatpakLayout.isAppID)
        self.statePath = statePath
        self.logger = logger
        statusState = Mutex(DconfBridgeStatus(dirs: self.apps))
    }

    deinit {
        stop()
    }

    /// What the bridge has done: `keysFromDconf` counts keys taken from keyfiles, `keysToDconf`
    /// those written to them, `dirs` the apps.
    package var status: DconfBridgeStatus {
        statusState.withLock { $0 }
    }

    /// Compares every app's keyfile with the store, then watches both; returns once compared.
    ///
    /// - Throws: `io` when the state folder cannot be made or inotify cannot be used.
    package func start() throws(SettingsError) {
        guard running.withLock({ $0 == nil }) else { return }
        guard mkdir(statePath, 0o700) == 0 || errno == EEXIST else {
            throw SettingsError(
                .io, "cannot make '\(statePath)': \(String(cString: strerror(errno)))", path: statePath)
        }
        let watcher = try KeyfileWatcher(queue: queue) { [weak self] changed in
            for app in changed { self?.keyfileChanged(app) }
        }
        var engines: [String: (engine: BridgeEngine, keyfile: AppKeyfile)] = [:]
        for app in apps {
            let engine = BridgeEngine(
                settings: settings, dirs: ["/"],
                keys: BridgeKeys(prefix: FlatpakSchemaSource.prefix(of: app)),
                actor: ChangeActor(uid: getuid(), pid: 0, executable: "flatpak:" + app),
                states: try BridgedStates(path: statePath + "/" + app), logger: logger,
                status: { [weak self] update in self?.statusState.withLock { update(&$0) } })
            engines[app] = (engine, AppKeyfile(app: app, layout: layout))
        }
        running.withLock { $0 = Running(apps: engines, watcher: watcher) }
        let observation = settings.observe(.prefixes(["flatpak."])) { [weak self] change in
            self?.storeChanged(change.keys)
        }
        running.withLock { $0?.observation = observation }
        queue.sync {
            for app in apps {
                // An app installed but never run has no folder yet: it is mirrored from the next
                // start after its first run (Flatpak makes the folder then).
                guard access(layout.appFolder(app), F_OK) == 0 else {
                    logger?.log(
                        .info, "Flatpak bridge: \(app) has not run yet; its settings are mirrored once it has"
                    )
                    continue
                }
                // The app's settings folder, made if the app has run but never wrote settings.
                do throws(SettingsError) {
                    try AppKeyfile.makeFolders(to: layout.keyfile(app), inside: layout.appFolder(app))
                } catch {
                    report(error.message)
                }
                watcher.watch(String(layout.keyfile(app).dropLast("/keyfile".count)), of: app)
                compareAll(app)
            }
        }
        statusState.withLock { $0.isRunning = true }
        logger?.log(.info, "Flatpak bridge: mirroring the settings of \(apps.count) app(s)")
    }

    /// Stops watching; changes made meanwhile are compared at the next start.
    package func stop() {
        guard
            let stopped = running.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        stopped.observation?.cancel()
        queue.sync { stopped.watcher.cancel() }
        statusState.withLock { $0.isRunning = false }
    }

    /// Runs `body` on the bridge's queue and waits: for tests and the benchmark, to know that
    /// everything noticed before has been compared.
    package func settle() {
        queue.sync {}
    }

    private func engine(_ app: String) -> (engine: BridgeEngine, keyfile: AppKeyfile)? {
        running.withLock { $0?.apps[app] }
    }

    /// Reads `app`'s keyfile again and compares all its keys (on the queue).
    private func compareAll(_ app: String) {
        guard let (engine, keyfile) = engine(app) else { return }
        do throws(SettingsError) {
            try keyfile.reload()
        } catch {
            report(error.message)
            return
        }
        engine.compareAll(client: keyfile)
    }

    private func keyfileChanged(_ app: String) {
        compareAll(app)
    }

    /// The store changed keys under `flatpak.`: compare them with their app's keyfile.
    private func storeChanged(_ keys: [String]) {
        var byApp: [String: [String]] = [:]
        for key in keys {
            guard let app = apps.last(where: { key.hasPrefix(FlatpakSchemaSource.prefix(of: $0)) }),
                let path = BridgeKeys(prefix: FlatpakSchemaSource.prefix(of: app)).path(forKey: key)
            else { continue }
            byApp[app, default: []].append(path)
        }
        guard !byApp.isEmpty else { return }
        let grouped = byApp
        queue.async { [weak self] in
            guard let self else { return }
            for (app, paths) in grouped {
                guard let (engine, keyfile) = self.engine(app) else { continue }
                do throws(SettingsError) {
                    try keyfile.reload()
                } catch {
                    self.report(error.message)
                    continue
                }
                engine.compare(paths.sorted(), client: keyfile)
            }
        }
    }

    private func report(_ problem: String) {
        logger?.log(.warning, "Flatpak bridge: \(problem)")
        statusState.withLock { $0.lastError = problem }
    }
}
