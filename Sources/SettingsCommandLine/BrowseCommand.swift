import SettingsBrowser
import SettingsDaemonClient
import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd browse [--socket PATH | --db PATH] [--no-mouse]`: the keys in the terminal, live
/// through the daemon, or read-only from a database file no daemon holds.
enum BrowseCommand {
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let terminal = try TerminalSession(reportsMouse: !arguments.isSet(Options.noMouse))
        let source: SettingsSource
        var reconnect: (() throws(SettingsError) -> SettingsSource)?
        if let database = arguments.value(Options.database) {
            source = SettingsSource(file: try arguments.service(forWriting: false), path: database)
        } else {
            let open = { () throws(SettingsError) -> SettingsSource in
                try SettingsSource(daemon: try arguments.daemon(), watcher: try arguments.daemon(timeout: 0))
            }
            source = try open()
            reconnect = open
        }
        var environment: [String: String] = [:]
        for name in ["NO_COLOR", "TERM"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        let usesColor = FrameWriter.usesColor(environment: environment)
        try Browser(source: source, terminal: terminal, usesColor: usesColor, reconnect: reconnect).run()
        return 0
    }
}
