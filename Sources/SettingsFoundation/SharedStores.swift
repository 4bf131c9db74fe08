import Foundation
import SettingsDaemonClient
import SettingsStore
import SettingsSync
import Synchronization

/// The stores `SettingsDefaults.standard`, `SettingsDefaults(suiteName:)` and
/// `NSUbiquitousKeyValueStore.default` use, opened on first use and kept for the process.
///
/// - Defaults: `$SETTINGSD_APP_DB`, else `apps/<process name>.sqlite` beside the daemon's
///   database, under the system's schemas, defaults and locks, synced with the daemon on
///   `SettingsPaths.socket` whenever it runs. A second process of the same app, which cannot
///   own the file, keeps its values in memory and still syncs them with the daemon.
/// - Key-value store: `apps/<process name>.ubiquitous.sqlite` with iCloud's limits, synced
///   through the hub at `$SETTINGSD_UBIQUITOUS_HUB` when it is set, in the namespace
///   `$SETTINGSD_UBIQUITOUS_NAMESPACE` names (a role of the app's own that the hub's login role
///   is a member of). Without one it shares the login role's namespace, where the user's daemon
///   keeps every key of theirs (GNOME's, other apps'): they would all reach this store and it
///   would send its keys to every machine; that is warned about once.
enum SharedStores {
    /// The folder of apps' stores, beside the daemon's database.
    static var folder: String {
        URL(fileURLWithPath: SettingsPaths.database).deletingLastPathComponent().appendingPathComponent(
            "apps"
        ).path
    }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The links, kept for the process: releasing a link stops it.
    private static let links = Mutex<[any Sendable]>([])

    private static func keep(_ link: any Sendable) {
        links.withLock { $0.append(link) }
    }

    /// The defaults store, or nil when it cannot be opened at all (the reason goes to stderr).
    static let defaults: Settings? = {
        var configuration = SettingsConfiguration()
        do {
            configuration.policy = try SettingsPolicy.load(
                schemaDirectories: SettingsPolicy.defaultSchemaDirectories,
                systemDirectory: SettingsPolicy.defaultSystemDirectory)
        } catch {
            warn("the system's schemas, defaults and locks are not applied: \(error)")
        }
        let path =
            environment("SETTINGSD_APP_DB") ?? "\(folder)/\(ProcessInfo.processInfo.processName).sqlite"
        let settings: Settings
        do {
            try FileManager.default.createDirectory(
                atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                withIntermediateDirectories: true)
            settings = try Settings(path: path, configuration: configuration)
        } catch {
            warn("\(path) cannot be opened (\(error)); values are kept in memory and synced with the daemon")
            settings = Settings(inMemoryWith: configuration)
        }
        keep(Replicator(settings: settings).sync(with: SettingsPaths.socket))
        return settings
    }()

    /// `SettingsDefaults.standard`: the defaults store's standard suite, else Foundation's own.
    // UserDefaults is thread-safe (Foundation documents it so) but not marked Sendable.
    nonisolated(unsafe) static let standardDefaults: UserDefaults = {
        if let settings = defaults, let standard = SettingsDefaults(settings: settings, suiteName: nil) {
            return standard
        }
        return UserDefaults(suiteName: nil) ?? UserDefaults()
    }()

    /// The key-value store's store, with iCloud's limits.
    static let ubiquitous: Settings = {
        var configuration = SettingsConfiguration()
        configuration.limits = .iCloud
        let path = "\(folder)/\(ProcessInfo.processInfo.processName).ubiquitous.sqlite"
        let settings: Settings
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            settings = try Settings(path: path, configuration: configuration)
        } catch {
            warn("\(path) cannot be opened (\(error)); the key-value store is kept in memory")
            settings = Settings(inMemoryWith: configuration)
        }
        if let hub = environment("SETTINGSD_UBIQUITOUS_HUB") {
            var hubConfiguration = HubConfiguration(url: hub)
            hubConfiguration.namespace = environment("SETTINGSD_UBIQUITOUS_NAMESPACE")
            if hubConfiguration.namespace == nil {
                warn(
                    "NSUbiquitousKeyValueStore syncs through the hub login role's own namespace, which holds every key your daemon syncs there too; give the app a namespace of its own with $SETTINGSD_UBIQUITOUS_NAMESPACE (a role the login role is a member of)"
                )
            }
            do {
                keep(try Replicator(settings: settings).sync(withHub: hubConfiguration))
            } catch {
                warn("$SETTINGSD_UBIQUITOUS_HUB: \(error)")
            }
        }
        return settings
    }()

    private static func warn(_ message: String) {
        FileHandle.standardError.write(Data("settingsd: \(message)\n".utf8))
    }
}
