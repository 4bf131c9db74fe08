import Synchronization

/// What every connection of a server shares: the store, its replicator (replica connections join
/// its sessions), the configuration and the counters `status` reports.
final class ServerContext: Sendable {
    let settings: Settings
    let replicator: Replicator
    let configuration: ServerConfiguration
    let startedAt = SettingsConfiguration.systemClock()
    let clients = Atomic<Int>(0)
    let watches = Atomic<Int>(0)

    init(replicator: Replicator, configuration: ServerConfiguration) {
        self.settings = replicator.settings
        self.replicator = replicator
        self.configuration = configuration
    }

    var logger: SettingsLogger { configuration.logger }
}
