import Dispatch
import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd run`: opens the database, serves it on the socket, and stops cleanly on SIGINT or
/// SIGTERM (stop accepting, finish in-flight requests, close the database, remove the socket).
struct RunCommand {
    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) {
        self.arguments = arguments
    }

    func run() throws -> Int32 {
        _ = try arguments.positionals(0...0)
        let database = arguments.value("--db") ?? SettingsPaths.database
        let socket = arguments.value("--socket") ?? SettingsPaths.socket
        let durabilityName = arguments.value("--durability") ?? "normal"
        guard let durability = Durability(rawValue: durabilityName) else {
            throw UsageError("--durability must be normal or full, not '\(durabilityName)'", command: "run")
        }
        let levelName = arguments.value("--log-level") ?? "info"
        guard let level = SettingsLogger.Level(name: levelName) else {
            throw UsageError(
                "--log-level must be debug, info, warning or error, not '\(levelName)'", command: "run")
        }
        var allowed: Set<UInt32> = []
        for text in arguments.allValues("--allow-uid") {
            guard let uid = UInt32(text) else {
                throw UsageError("--allow-uid needs a numeric user id, not '\(text)'", command: "run")
            }
            allowed.insert(uid)
        }
        var maximumFrame = 8 << 20
        if let text = arguments.value("--max-frame") {
            let minimum = ServerConfiguration.minimumFrameBytes(for: .desktop)
            guard let bytes = Int(text), bytes >= minimum else {
                throw UsageError(
                    "--max-frame needs a byte count of at least \(minimum) (what the largest value needs)",
                    command: "run")
            }
            maximumFrame = bytes
        }

        var idleTimeout = 300.0
        if let text = arguments.value("--idle-timeout") {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw UsageError(
                    "--idle-timeout needs a number of seconds (0: never), not '\(text)'", command: "run")
            }
            idleTimeout = seconds
        }
        var tombstoneLifetime = SettingsConfiguration().tombstoneLifetime
        if let text = arguments.value("--tombstone-days") {
            guard let days = Double(text), days >= 1, days <= 36_500 else {
                throw UsageError(
                    "--tombstone-days needs a number of days from 1 to 36500, not '\(text)'", command: "run")
            }
            tombstoneLifetime = UInt64(days * 86_400_000)
        }
        var history = HistoryRetention()
        if let text = arguments.value("--history-keep") {
            guard let milliseconds = Self.milliseconds(text) else {
                throw UsageError(
                    "--history-keep needs a duration such as 90d, 12h, 30m or 0 (off), not '\(text)'",
                    command: "run")
            }
            history.keepMilliseconds = milliseconds
        }
        if let text = arguments.value("--history-max") {
            guard let count = Int(text), count >= 0 else {
                throw UsageError("--history-max needs a number of records, not '\(text)'", command: "run")
            }
            history.maximumRecords = count
        }
        // A closed stderr pipe (`settingsd run 2>&1 | head`) must fail a write, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        SignalHandlers.blockDelivery()
        let logger = SettingsLogger(minimumLevel: level)
        try SettingsServer.checkAvailable(socketPath: socket)
        var configuration = ServerConfiguration(
            socketPath: socket, maximumFrameBytes: maximumFrame, allowedUIDs: allowed, logger: logger)
        configuration.idleTimeout = idleTimeout
        let schemaDirectories =
            arguments.allValues("--schemas").isEmpty
            ? SettingsPolicy.defaultSchemaDirectories : arguments.allValues("--schemas")
        let systemDirectory = arguments.value("--system-dir") ?? SettingsPolicy.defaultSystemDirectory
        let isStrict = arguments.flag("--strict-schemas")
        var storeConfiguration = SettingsConfiguration(durability: durability)
        storeConfiguration.tombstoneLifetime = tombstoneLifetime
        storeConfiguration.history = history
        storeConfiguration.policy = try PolicyWatcher.load(
            schemaDirectories: schemaDirectories, systemDirectory: systemDirectory, isStrict: isStrict)
        let settings = try Self.open(database, configuration: storeConfiguration)
        let server = try SettingsServer(
            settings: settings,
            configuration: configuration)
        let policy = PolicyWatcher(
            schemaDirectories: schemaDirectories, systemDirectory: systemDirectory, isStrict: isStrict,
            settings: settings, logger: logger)
        let links = arguments.allValues("--peer").map { settings.sync(with: $0, logger: logger) }
        let hubURL = arguments.value("--hub") ?? SettingsPaths.hubFromEnvironment
        if hubURL == nil, arguments.value("--hub-namespace") != nil {
            throw UsageError("--hub-namespace needs --hub (or $SETTINGSD_HUB)", command: "run")
        }
        let hub = try hubURL.map { url throws(SettingsError) in
            try settings.sync(
                withHub: HubConfiguration(url: url, namespace: arguments.value("--hub-namespace")),
                logger: logger)
        }
        // Handlers go in before the socket exists: a SIGTERM sent as soon as a client can connect
        // must already stop the daemon cleanly.
        let signals = SignalHandlers.install { signal in
            guard signal != SIGHUP else {
                policy.reload(because: "SIGHUP")
                return
            }
            logger.log(.info, "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
            for link in links { link.stop() }
            hub?.stop()
            server.stop()
            settings.close()
            exit(0)
        }
        try server.start()
        let collector = Self.collectTombstonesPeriodically(settings, logger: logger)
        let pruner = Self.pruneHistoryPeriodically(settings, logger: logger)
        Output.line(
            "settingsd \(SettingsdVersion.current) listening on \(socket) (database \(database), replica \(settings.replicaID))"
        )
        let timers: [any DispatchSourceTimer] = [collector, pruner]
        Self.serveForever(keeping: (signals, timers))
    }

    /// Prunes the history past its retention every ten seconds, a small batch at a time, so the
    /// writer lock is never held long enough to delay a client.
    private static func pruneHistoryPeriodically(_ settings: Settings, logger: SettingsLogger)
        -> any DispatchSourceTimer
    {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "settingsd.history"))
        timer.schedule(deadline: .now() + .seconds(10), repeating: .seconds(10))
        timer.setEventHandler {
            do throws(SettingsError) {
                while try settings.pruneHistory(batch: 200) > 0 { usleep(1_000) }
            } catch {
                logger.log(.warning, "pruning the history failed: \(error.message)")
            }
        }
        timer.resume()
        return timer
    }

    /// `90d`, `12h`, `30m`, `45s` or a plain number of seconds, in milliseconds.
    static func milliseconds(_ text: String) -> UInt64? {
        let units: [Character: Double] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        let unit = text.last.flatMap { units[$0] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number >= 0, number.isFinite,
            number * (unit ?? 1) < 1e12
        else { return nil }
        return UInt64(number * (unit ?? 1) * 1000)
    }

    /// Collects old tombstones every six hours (the store also does when it opens).
    private static func collectTombstonesPeriodically(_ settings: Settings, logger: SettingsLogger)
        -> any DispatchSourceTimer
    {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "settingsd.tombstones"))
        timer.schedule(deadline: .now() + .seconds(6 * 3600), repeating: .seconds(6 * 3600))
        timer.setEventHandler {
            do throws(SettingsError) {
                let collected = try settings.collectTombstones()
                if collected > 0 {
                    logger.log(.info, "collected \(collected) tombstone(s) past their lifetime")
                }
            } catch {
                logger.log(.warning, "collecting tombstones failed: \(error.message)")
            }
        }
        timer.resume()
        return timer
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

    /// Parks the main thread; the server, the timers and the signal handlers run on their own.
    ///
    /// Not `dispatchMain()`: it ends the main thread, and libdispatch's exit path then opens an
    /// eventfd for the main queue, which aborts the process (SIGILL) when clients have taken
    /// every descriptor by then (`ulimit -n`); nothing in the daemon uses the main queue.
    private static func serveForever(keeping sources: ([any DispatchSourceSignal], [any DispatchSourceTimer]))
        -> Never
    {
        withExtendedLifetime(sources) { () -> Never in
            while true { pause() }
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP delivered on a Dispatch queue instead of interrupting a random thread.
enum SignalHandlers {
    /// Blocks the three signals in this thread and every thread started after it, before any is:
    /// they then stay pending until the Dispatch sources read them. A thread that did not block
    /// them (the parked main thread, the server's loop) would take a signal and drop it, since
    /// its default action is ignored.
    static func blockDelivery() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, number) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Ignores the default actions and calls `handler` once per signal; keep the result alive.
    static func install(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "settingsd.signals")
        return [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
