package import SettingsDaemonClient

/// The sync view: the replica, then every peer, link, hub and synced folder (SSH peers are links
/// and peers) with its state, agreement, pending counts and last error, and the dconf bridge.
package enum SyncPane {
    /// Draws `status` (or why it is missing) over the body.
    package static func draw(
        _ status: DaemonStatus?, problem: String?, location: String, layout: Layout, into frame: inout Frame
    ) {
        var lines: [(String, CellStyle)] = []
        if let status {
            lines = statusLines(status)
        } else {
            lines.append(("No state: \(problem ?? "reading it")", .tone(.error)))
        }
        if let problem, status != nil { lines.insert((problem, .tone(.error)), at: 0) }
        lines.insert(("Sync — \(location)   (s or Esc: back to the keys)", .tone(.accent)), at: 0)
        for (offset, line) in lines.prefix(layout.bodyHeight).enumerated() {
            frame.put(
                line.0, row: layout.bodyTop + offset, column: 1, width: layout.columns - 2, style: line.1)
        }
    }

    /// The lines of `status`.
    package static func statusLines(_ status: DaemonStatus) -> [(String, CellStyle)] {
        var lines: [(String, CellStyle)] = []
        lines.append(("replica   \(status.describe(status.replica))", .plain))
        lines.append(("keys      \(status.keys), sequence \(status.sequence)", .plain))
        if let key = status.syncKey { lines.append(("sealing   \(key)", .plain)) }
        if let policy = status.policy { lines.append(("policy    \(policy)", .plain)) }
        lines.append(("", .plain))
        lines.append(("Peers", .tone(.accent)))
        if status.peers.isEmpty { lines.append(("  none", .tone(.muted))) }
        for peer in status.peers {
            let state = peer.isConnected ? "connected" : "disconnected"
            lines.append(
                (
                    "  \(status.describe(peer.replica)) \(peer.address)  \(state), \(peer.agreement), out \(peer.pendingOutgoing) in \(peer.pendingIncoming)",
                    peer.isConnected ? .plain : .tone(.muted)
                ))
            if let error = peer.lastError { lines.append(("    \(error)", .tone(.error))) }
        }
        lines.append(("Links", .tone(.accent)))
        if status.links.isEmpty { lines.append(("  none", .tone(.muted))) }
        for link in status.links {
            lines.append(("  \(link.address)  \(link.state)", .plain))
            if let error = link.lastError { lines.append(("    \(error)", .tone(.error))) }
        }
        lines.append(("Hubs", .tone(.accent)))
        if status.hubs.isEmpty { lines.append(("  none", .tone(.muted))) }
        for hub in status.hubs {
            let state = hub.isConnected ? "connected" : "disconnected"
            lines.append(
                (
                    "  \(hub.address)\(hub.namespace.map { " \($0)" } ?? "")  \(state), \(hub.agreement), up \(hub.pendingUp) down \(hub.pendingDown)",
                    hub.isConnected ? .plain : .tone(.muted)
                ))
            if let error = hub.lastError { lines.append(("    \(error)", .tone(.error))) }
        }
        lines.append(("Folders", .tone(.accent)))
        if status.folders.isEmpty { lines.append(("  none", .tone(.muted))) }
        for folder in status.folders {
            let agreed = folder.replicas.filter { $0.agreement.hasPrefix("agreed") }.count
            lines.append(
                (
                    "  \(folder.path)  \(folder.isWatching ? "watching" : "not watching"), up \(folder.pendingUp), \(agreed) of \(folder.replicas.count) replicas agree",
                    .plain
                ))
            if let error = folder.lastError { lines.append(("    \(error)", .tone(.error))) }
        }
        if let dconf = status.dconf {
            lines.append(("dconf", .tone(.accent)))
            lines.append(
                (
                    "  \(dconf.dirs.joined(separator: " "))  \(dconf.isRunning ? "running" : "stopped"), \(dconf.keysFromDconf) in, \(dconf.keysToDconf) out",
                    .plain
                ))
            if let error = dconf.lastError { lines.append(("    \(error)", .tone(.error))) }
        }
        return lines
    }
}
