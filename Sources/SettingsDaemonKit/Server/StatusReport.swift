import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The `status` result: the store's state, and the serving daemon's when there is one.
enum StatusReport {
    /// The status of `settings`, served by the daemon `server`, or in this process (`DirectClient`)
    /// when nil: then there is no socket, pid, uptime or client to report.
    static func status(of settings: Settings, server: ServerContext?) -> DaemonStatus {
        let usage = settings.usage
        var status = DaemonStatus(replica: settings.replicaID)
        status.keys = usage.keys
        status.bytes = usage.bytes
        status.sequence = settings.sequence
        status.historyRecords = settings.historyCount
        status.database = settings.path
        status.digest = settings.digest
        status.names = settings.knownNames()
        status.policy = policySummary(settings.fleetPolicy)
        guard let server else { return status }
        status.peers = server.replicator.peers.map { peer(of: $0, localSequence: status.sequence) }
        status.links = server.replicator.links.map {
            DaemonStatus.Link(
                address: $0.address, state: $0.state.rawValue, replica: $0.peer, lastError: $0.lastError,
                failures: $0.failures)
        }
        status.hubs = server.replicator.hubs.map(hub(of:))
        status.folders = server.replicator.folders.map(folder(of:))
        status.syncKey = server.configuration.syncKey
        status.clients = server.clients.load(ordering: .relaxed)
        status.watches = server.watches.load(ordering: .relaxed)
        status.socket = server.configuration.socketPath
        status.pid = getpid()
        status.dconf = server.dconf.map { dconf(of: $0.status) }
        status.flatpak = server.flatpak.map { dconf(of: $0.status) }
        status.uptimeSeconds = (Deadline.now - server.startedAt).seconds
        return status
    }

    /// The fleet policies in force in one line: each policy's revision, the keys set, the
    /// digest and the keys refused.
    private static func policySummary(_ fleet: FleetPolicy) -> String? {
        let revisions = fleet.revisions
        guard !revisions.isEmpty else { return nil }
        let policies = revisions.sorted { $0.key < $1.key }.map { "'\($0.key)' revision \($0.value)" }
        let mandatory = fleet.settings.values.filter { $0.level == .mandatory }.count
        let refused =
            fleet.refusals.isEmpty
            ? ""
            : ", \(fleet.refusals.count) key(s) refused (\(fleet.refusals[0].key): \(fleet.refusals[0].reason))"
        return
            "\(policies.joined(separator: ", ")): \(mandatory) mandatory, \(fleet.settings.count - mandatory) recommended key(s), digest \(fleet.digest)\(refused)"
    }

    private static func peer(of peer: PeerStatus, localSequence: Int64) -> DaemonStatus.Peer {
        var report = DaemonStatus.Peer(replica: peer.replica)
        report.address = peer.address
        report.isConnected = peer.isConnected
        report.connections = peer.connectionCount
        report.lastContactMilliseconds = Int64(clamping: peer.lastContactMilliseconds)
        report.pendingOutgoing = peer.pendingOutgoing(localSequence: localSequence)
        report.pendingIncoming = peer.pendingIncoming
        report.sentThrough = peer.sentThrough
        report.acknowledgedThrough = peer.acknowledgedThrough
        report.receivedThrough = peer.receivedThrough
        report.agreement =
            peer.agreement == .agreed && peer.refusedKeys > 0
            ? "agreed (\(peer.refusedKeys) key\(peer.refusedKeys == 1 ? "" : "s") refused)"
            : peer.agreement.description
        report.repairedKeys = peer.repairedKeys
        report.refusedKeys = peer.refusedKeys
        report.clockOffsetMilliseconds = peer.clockOffsetMilliseconds
        report.entriesAheadOfClock = peer.entriesAheadOfClock
        report.lastError = peer.lastError
        return report
    }

    private static func folder(of folder: FolderStatus) -> DaemonStatus.Folder {
        var report = DaemonStatus.Folder(path: folder.path)
        report.isWatching = folder.isWatching
        report.pendingUp = folder.pendingUp
        report.publishedThrough = folder.publishedThrough
        report.ignoredFiles = folder.ignoredFiles
        report.refusedFiles = folder.refusedFiles
        report.lastError = folder.lastError
        report.lastFork = folder.lastFork
        report.sealedUnder = folder.sealedUnder
        report.sealedRowsRefused = folder.sealedRowsRefused
        report.lastSealRefusal = folder.lastSealRefusal
        report.replicas = folder.replicas.map {
            DaemonStatus.Folder.Replica(
                replica: $0.replica, readThrough: $0.readThrough, publishedThrough: $0.publishedThrough,
                agreement: $0.agreement, waitingFor: $0.waitingFor)
        }
        return report
    }

    private static func hub(of hub: HubStatus) -> DaemonStatus.Hub {
        var report = DaemonStatus.Hub(address: hub.address)
        report.namespace = hub.namespace
        report.isConnected = hub.isConnected
        report.lastContactMilliseconds = Int64(clamping: hub.lastContactMilliseconds)
        report.pendingUp = hub.pendingUp
        report.pendingDown = hub.pendingDown
        report.agreement = hub.agreement
        report.repairedKeys = hub.repairedKeys
        report.lastError = hub.lastError
        report.mode = hub.mode
        if hub.mode == "poll" {
            report.pollSeconds = hub.pollSeconds
            report.longestPollSeconds = hub.longestPollSeconds
            (report.pollMachines, report.pollRate) = (hub.pollReplicas, hub.pollRate)
        }
        report.lastRewind = hub.lastRewind
        report.lastAccountChange = hub.lastAccountChange
        report.clockOffsetMilliseconds = hub.clockOffsetMilliseconds
        report.entriesAheadOfClock = hub.entriesAheadOfClock
        report.sealedUnder = hub.sealedUnder
        report.sealedRowsRefused = hub.sealedRowsRefused
        report.lastSealRefusal = hub.lastSealRefusal
        return report
    }

    private static func dconf(of bridge: DconfBridgeStatus) -> DaemonStatus.Dconf {
        var report = DaemonStatus.Dconf(dirs: bridge.dirs)
        report.isRunning = bridge.isRunning
        report.keysFromDconf = bridge.keysFromDconf
        report.keysToDconf = bridge.keysToDconf
        report.changeSets = bridge.changeSets
        report.lockedPaths = bridge.lockedPaths
        report.lastError = bridge.lastError
        return report
    }
}
