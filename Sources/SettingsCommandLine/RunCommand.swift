import SettingsStore

/// `settingsd run`: reads its options into a `DaemonConfiguration` and runs a `SettingsDaemon`
/// (which stops cleanly on SIGINT or SIGTERM and reloads its policy on SIGHUP).
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
        var configuration = DaemonConfiguration(databasePath: database, socketPath: socket)
        configuration.server = ServerConfiguration(
            socketPath: socket, maximumFrameBytes: maximumFrame, allowedUIDs: allowed,
            logger: SettingsLogger(minimumLevel: level))
        configuration.server.idleTimeout = idleTimeout
        let schemaDirectories = arguments.allValues("--schemas")
        if !schemaDirectories.isEmpty { configuration.schemaDirectories = schemaDirectories }
        if let systemDirectory = arguments.value("--system-dir") {
            configuration.systemDirectory = systemDirectory
        }
        configuration.isStrict = arguments.flag("--strict-schemas")
        configuration.store.durability = durability
        configuration.store.tombstoneLifetime = tombstoneLifetime
        configuration.store.history = history
        configuration.peers = arguments.allValues("--peer")
        let hubURL = arguments.value("--hub") ?? SettingsPaths.hubFromEnvironment
        if hubURL == nil, arguments.value("--hub-namespace") != nil {
            throw UsageError("--hub-namespace needs --hub (or $SETTINGSD_HUB)", command: "run")
        }
        configuration.hub = hubURL.map {
            HubConfiguration(url: $0, namespace: arguments.value("--hub-namespace"))
        }
        let daemon = try SettingsDaemon(configuration: configuration)
        try daemon.run {
            Output.line(
                "settingsd \(SettingsdVersion.current) listening on \(socket) (database \(database), replica \(daemon.settings.replicaID))"
            )
        }
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
}
