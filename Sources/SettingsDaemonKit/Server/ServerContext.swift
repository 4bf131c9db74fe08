import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

/// What every connection of a server shares: the store, its replicator (replica connections join
/// its sessions), the configuration and the counters `status` reports.
final class ServerContext: Sendable {
    let settings: Settings
    let replicator: Replicator
    let configuration: ServerConfiguration
    /// When the server was made, on the monotonic clock (`status`'s uptime).
    let startedAt = Deadline.now
    let clients = Atomic<Int>(0)
    let watches = Atomic<Int>(0)
    /// What every connection's staged import parts cost, about, in bytes (`ImportStaging`).
    let stagedImportBytes = Atomic<Int>(0)
    /// The dconf bridge of the daemon, if it runs one, for `status`.
    let dconf: DconfBridge?
    /// The Flatpak keyfile bridge of the daemon, if it runs one, for `status`.
    let flatpak: FlatpakBridge?

    init(
        replicator: Replicator, configuration: ServerConfiguration, dconf: DconfBridge?,
        flatpak: FlatpakBridge?
    ) {
        self.settings = replicator.settings
        self.replicator = replicator
        self.configuration = configuration
        self.dconf = dconf
        self.flatpak = flatpak
    }

    var logger: SettingsLogger { configuration.logger }
}
