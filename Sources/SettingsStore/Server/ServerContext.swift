import Synchronization

/// What every connection of a server shares: the store, the configuration and
/// the counters `status` reports.
final class ServerContext: Sendable {
    let settings: Settings
    let configuration: ServerConfiguration
    let startedAt = SettingsConfiguration.systemClock()
    let clients = Atomic<Int>(0)
    let watches = Atomic<Int>(0)

    init(settings: Settings, configuration: ServerConfiguration) {
        self.settings = settings
        self.configuration = configuration
    }

    var logger: SettingsLogger { configuration.logger }
}
