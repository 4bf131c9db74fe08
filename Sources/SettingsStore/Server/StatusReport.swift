#if canImport(Glibc)
    import Glibc
#endif

/// The `status` result: the store's state, and the serving daemon's when there is one.
enum StatusReport {
    /// The fields for `settings`, served by the daemon `server`, or in this process (`DirectClient`)
    /// when nil: then there is no socket, pid, uptime or client to report.
    static func fields(settings: Settings, server: ServerContext?) -> [String: JSONValue] {
        let usage = settings.usage
        let sequence = settings.sequence
        var fields: [String: JSONValue] = [
            "replica": .string(settings.replicaID.description), "keys": .integer(Int64(usage.keys)),
            "bytes": .integer(Int64(usage.bytes)), "sequence": .integer(sequence),
            "database": settings.path.map { .string($0) } ?? .null,
            "version": .string(SettingsdVersion.current), "digest": .string(settings.digest),
            "peers": .array((server?.replicator.peers ?? []).map { json(of: $0, localSequence: sequence) }),
            "links": .array((server?.replicator.links ?? []).map(json(of:))),
            "hubs": .array((server?.replicator.hubs ?? []).map(json(of:))),
            "clients": .integer(0), "watches": .integer(0),
            "historyRecords": .integer(Int64(settings.historyCount)),
        ]
        if let server {
            fields["clients"] = .integer(Int64(server.clients.load(ordering: .relaxed)))
            fields["watches"] = .integer(Int64(server.watches.load(ordering: .relaxed)))
            fields["socket"] = .string(server.configuration.socketPath)
            fields["pid"] = .integer(Int64(getpid()))
            if let dconf = server.dconf?.status { fields["dconf"] = json(of: dconf) }
            fields["uptimeSeconds"] = .double(
                Double(SettingsConfiguration.systemClock() - server.startedAt) / 1000)
        }
        return fields
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
            "connections": .integer(Int64(peer.connectionCount)),
            "agreement": .string(
                peer.agreement == .agreed && peer.refusedKeys > 0
                    ? "agreed (\(peer.refusedKeys) key\(peer.refusedKeys == 1 ? "" : "s") refused)"
                    : peer.agreement.description),
            "repairedKeys": .integer(Int64(peer.repairedKeys)),
            "refusedKeys": .integer(Int64(peer.refusedKeys)),
            "clockOffsetMs": .integer(peer.clockOffsetMilliseconds),
            "entriesAheadOfClock": .integer(Int64(peer.entriesAheadOfClock)),
        ])
    }

    private static func json(of dconf: DconfBridgeStatus) -> JSONValue {
        var members: [String: JSONValue] = [
            "dirs": .array(dconf.dirs.map { .string($0) }), "running": .bool(dconf.isRunning),
            "keysFromDconf": .integer(Int64(dconf.keysFromDconf)),
            "keysToDconf": .integer(Int64(dconf.keysToDconf)),
            "changeSets": .integer(Int64(dconf.changeSets)),
            "locked": .array(dconf.lockedPaths.map { .string($0) }),
        ]
        if let error = dconf.lastError { members["lastError"] = .string(error) }
        return .object(members)
    }

    private static func json(of hub: HubStatus) -> JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(hub.address), "connected": .bool(hub.isConnected),
            "lastContactMs": .integer(Int64(clamping: hub.lastContactMilliseconds)),
            "pendingUp": .integer(hub.pendingUp), "pendingDown": .integer(hub.pendingDown),
            "agreement": .string(hub.agreement), "repairedKeys": .integer(Int64(hub.repairedKeys)),
            "mode": .string(hub.mode), "clockOffsetMs": .integer(hub.clockOffsetMilliseconds),
            "entriesAheadOfClock": .integer(Int64(hub.entriesAheadOfClock)),
        ]
        if hub.mode == "poll" { members["pollSeconds"] = .double(hub.pollSeconds) }
        if let rewind = hub.lastRewind { members["lastRewind"] = .string(rewind) }
        if let change = hub.lastAccountChange { members["lastAccountChange"] = .string(change) }
        if let namespace = hub.namespace { members["namespace"] = .string(namespace) }
        if let error = hub.lastError { members["lastError"] = .string(error) }
        return .object(members)
    }

    private static func json(of link: LinkStatus) -> JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(link.address), "state": .string(link.state.rawValue),
            "failures": .integer(Int64(link.failures)),
        ]
        if let peer = link.peer { members["replica"] = .string(peer.description) }
        if let error = link.lastError { members["lastError"] = .string(error) }
        return .object(members)
    }
}
