import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

    /// The `status` result.
    func status() -> [String: JSONValue] {
        let usage = settings.usage
        let uptime = Double(SettingsConfiguration.systemClock() - startedAt) / 1000
        return [
            "replica": .string(settings.replicaID.description), "keys": .integer(Int64(usage.keys)),
            "bytes": .integer(Int64(usage.bytes)), "sequence": .integer(settings.sequence),
            "clients": .integer(Int64(clients.load(ordering: .relaxed))),
            "watches": .integer(Int64(watches.load(ordering: .relaxed))),
            "database": settings.path.map { .string($0) } ?? .null,
            "socket": .string(configuration.socketPath),
            "pid": .integer(Int64(getpid())), "uptimeSeconds": .double(uptime),
            "version": .string(SettingsdVersion.current), "digest": .string(settings.digest),
            "peers": .array(settings.peers.map { Self.json(of: $0, localSequence: settings.sequence) }),
        ]
    }

    private static func json(of peer: PeerStatus, localSequence: Int64) -> JSONValue {
        .object([
            "replica": .string(peer.replica.description), "address": .string(peer.address),
            "connected": .bool(peer.isConnected),
            "lastContactMs": .integer(Int64(clamping: peer.lastContactMilliseconds)),
            "pendingOut": .integer(peer.pendingOutgoing(localSequence: localSequence)),
            "pendingIn": .integer(peer.pendingIncoming), "sentThrough": .integer(peer.sentThrough),
            "acknowledgedThrough": .integer(peer.acknowledgedThrough),
            "receivedThrough": .integer(peer.receivedThrough),
        ])
    }
}
