import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd status` and `settingsd sync --wait`: what a replica reports about itself and its
/// peers, hubs and dconf bridge.
enum StatusCommands {
    static func status(_ arguments: ParsedArguments) throws -> Int32 {
        _ = try arguments.positionals(0...0)
        let status = try arguments.service(forWriting: false).status()
        if arguments.isSet(Options.json) {
            Output.line(JSONValue.object(status.fields).serialized())
            return 0
        }
        Output.line("replica: \(status.replica)")
        if let name = status.names[status.replica] { Output.line("name: \(name)") }
        Output.line("database: \(status.database ?? "null")")
        if let socket = status.socket { Output.line("socket: \(socket)") }
        Output.line("version: \(status.version)")
        if let pid = status.pid { Output.line("pid: \(pid)") }
        if let uptime = status.uptimeSeconds {
            Output.line("uptime: \(JSONValue.double(uptime).serialized()) s")
        }
        Output.line("keys: \(status.keys)")
        Output.line("size: \(status.bytes) bytes")
        Output.line("sequence: \(status.sequence)")
        Output.line("clients: \(status.clients)")
        Output.line("watches: \(status.watches)")
        if let digest = status.digest { Output.line("digest: \(digest)") }
        if let records = status.historyRecords { Output.line("history records: \(records)") }
        Output.line("sync key: \(status.syncKey ?? "none (what leaves this machine is not sealed)")")
        if let policy = status.policy { Output.line("hub policy: \(policy)") }
        if let dconf = status.dconf { Output.line(line(of: dconf)) }
        if let flatpak = status.flatpak {
            var line =
                "flatpak \(flatpak.dirs.count) app(s): \(flatpak.isRunning ? "running" : "not running"), "
                + "\(flatpak.keysFromDconf) key(s) taken from keyfiles, \(flatpak.keysToDconf) written to them"
            if let error = flatpak.lastError { line += ", last error: \(error)" }
            Output.line(line)
        }
        // Fields a newer daemon adds still show, under their wire names.
        for (name, value) in status.otherFields.sorted(by: { $0.key < $1.key }) {
            Output.line("\(name): \(text(value))")
        }
        for link in status.links {
            var line = "link \(link.address): \(link.state)"
            if let error = link.lastError { line += ", \(link.failures) failure(s), last: \(error)" }
            Output.line(line)
        }
        for hub in status.hubs { Output.line(line(of: hub)) }
        for folder in status.folders { Output.line(line(of: folder, in: status)) }
        guard !status.peers.isEmpty else {
            Output.line("peers: none")
            return 0
        }
        let now = Int64(SettingsConfiguration.systemClock())
        for peer in status.peers {
            let contact =
                peer.lastContactMilliseconds > 0
                ? String(Double(now - peer.lastContactMilliseconds) / 1000) + " s ago" : "never"
            Output.line(
                "peer \(status.describe(peer.replica)) (\(peer.address)): \(peer.isConnected ? "connected" : "disconnected"), "
                    + "\(peer.agreement), last contact \(contact), \(peer.pendingOutgoing) change(s) to send, "
                    + "\(peer.pendingIncoming) to receive"
                    + clockNotes(offset: peer.clockOffsetMilliseconds, ahead: peer.entriesAheadOfClock)
                    + (peer.lastError.map { ", last error: \($0)" } ?? ""))
        }
        return 0
    }

    /// ", sealed under key …, n sealed row(s) refused (last: …)" or ", in the clear".
    private static func sealNotes(_ key: String?, refused: Int, last: String?) -> String {
        var notes = key.map { ", sealed under key \($0)" } ?? ", in the clear"
        if refused > 0 { notes += ", \(refused) sealed row(s) refused (last: \(last ?? "?"))" }
        return notes
    }

    private static func line(of hub: DaemonStatus.Hub) -> String {
        var line =
            "hub \(hub.address), namespace \(hub.namespace ?? "?"): "
            + (hub.isConnected ? "connected" : "not connected")
            + ", \(hub.pendingUp) change(s) to push, \(hub.pendingDown) to pull, \(hub.agreement)"
        if hub.mode == "poll" {
            func seconds(_ value: Double?) -> String {
                value.map { JSONValue.double($0).serialized() } ?? "?"
            }
            line += ", polling (through a pooler) every \(seconds(hub.pollSeconds)) s"
            if let longest = hub.longestPollSeconds, let machines = hub.pollMachines, let rate = hub.pollRate
            {
                line +=
                    " (at most every \(seconds(longest)) s: \(machines) machine(s) on the namespace, the hub's poll rate \(rate) a second)"
            }
        }
        if hub.repairedKeys > 0 { line += ", \(hub.repairedKeys) key(s) repaired" }
        line += clockNotes(offset: hub.clockOffsetMilliseconds, ahead: hub.entriesAheadOfClock)
        if let error = hub.lastError { line += ", last error: \(error)" }
        if let rewind = hub.lastRewind { line += ", last rewind: \(rewind)" }
        if let change = hub.lastAccountChange { line += ", \(change)" }
        line += sealNotes(hub.sealedUnder, refused: hub.sealedRowsRefused, last: hub.lastSealRefusal)
        return line
    }

    private static func line(of folder: DaemonStatus.Folder, in status: DaemonStatus) -> String {
        var line =
            "folder \(folder.path): " + (folder.isWatching ? "watching" : "not watching")
            + ", \(folder.pendingUp) change(s) to write, \(folder.replicas.count) other replica(s)"
        for replica in folder.replicas {
            line +=
                "; \(status.describe(replica.replica)) \(replica.agreement), read through \(replica.readThrough)"
            if let published = replica.publishedThrough { line += " of \(published)" }
            if let waiting = replica.waitingFor { line += ", waiting for \(waiting)" }
        }
        if folder.ignoredFiles > 0 { line += ", \(folder.ignoredFiles) file(s) skipped" }
        if folder.refusedFiles > 0 { line += ", \(folder.refusedFiles) file(s) refused" }
        if let error = folder.lastError { line += ", last error: \(error)" }
        if let fork = folder.lastFork { line += ", \(fork)" }
        line += sealNotes(folder.sealedUnder, refused: folder.sealedRowsRefused, last: folder.lastSealRefusal)
        return line
    }

    private static func line(of dconf: DaemonStatus.Dconf) -> String {
        var line =
            "dconf \(dconf.dirs.joined(separator: ", ")): \(dconf.isRunning ? "running" : "not running"), "
            + "\(dconf.keysFromDconf) key(s) taken, \(dconf.keysToDconf) written in \(dconf.changeSets) change set(s)"
        if !dconf.lockedPaths.isEmpty {
            line += ", locked by the site: \(dconf.lockedPaths.joined(separator: ", "))"
        }
        if let error = dconf.lastError { line += ", last error: \(error)" }
        return line
    }

    /// What `status` says of a peer's or a hub's clock: how far off it is, from a second on, and
    /// how many of its entries were stamped beyond this clock's bound.
    private static func clockNotes(offset: Int64, ahead: Int) -> String {
        var notes = ""
        if offset.magnitude >= 1000 {
            notes += ", clock \(offset / 1000) s \(offset > 0 ? "ahead" : "behind")"
        }
        if ahead > 0 { notes += ", \(ahead) entries stamped ahead of this clock" }
        return notes
    }

    /// A wire value for a line of text: strings as they are, the rest as JSON.
    private static func text(_ value: JSONValue) -> String {
        if case .string(let string) = value { return string }
        return value.serialized()
    }

    static func sync(_ arguments: ParsedArguments) throws -> Int32 {
        _ = try arguments.positionals(0...0)
        guard arguments.isSet(Options.wait) else {
            throw UsageError(
                "sync needs --wait (it waits until connected peers have caught up)", command: "sync")
        }
        let timeout = try arguments.value(Options.timeout) ?? 60
        let client = try arguments.daemon()
        let deadline = Deadline.after(.milliseconds(Int64(timeout * 1000)))
        let terminal = isatty(STDERR_FILENO) != 0
        // The first look makes every hub compare digests again: rows edited by hand change no
        // counter, and an agreement found before them proves nothing now.
        var verifyingHubs = true
        while true {
            let status = try client.status(verifyingHubs: verifyingHubs)
            verifyingHubs = false
            let connected = status.peers.filter(\.isConnected)
            if connected.isEmpty, status.hubs.isEmpty, status.links.isEmpty, status.folders.isEmpty {
                Output.standardError(
                    "no peer is connected and no hub or peer link is set: nothing to wait for\n")
                return 0
            }
            let waiting = backlog(status, connected: connected)
            if waiting.isEmpty {
                let hubs = status.hubs.isEmpty ? "" : " and \(status.hubs.count) hub(s)"
                let folders =
                    status.folders.isEmpty
                    ? ""
                    : "; \(status.folders.count) folder(s): every change written and every other replica's files read (what other machines have is up to the folder's syncer)"
                Output.standardError(
                    (terminal ? "\r\u{1B}[K" : "")
                        + "in sync with \(connected.count) peer(s)\(hubs): all agree\(folders)\n")
                return 0
            }
            if terminal { Output.standardError("\r\u{1B}[Kwaiting: \(waiting)") }
            guard !deadline.hasPassed else {
                if terminal { Output.standardError("\n") }
                throw SettingsError(.timeout, "not in sync after \(Output.number(timeout)) s: \(waiting)")
            }
            usleep(20_000)
        }
    }

    /// What `sync --wait` still waits for, in words; empty when in sync: every peer link this
    /// replica dials is syncing, every connected peer acknowledged everything, sent everything
    /// and agrees (anti-entropy), every hub is connected, has every local change, has nothing
    /// left to pull and agrees (its digest equals this replica's). A peer that cannot store the
    /// changes, or whose changes cannot be stored here, is named with the reason.
    private static func backlog(_ status: DaemonStatus, connected: [DaemonStatus.Peer]) -> String {
        var waiting: [String] = []
        for link in status.links where link.state != "syncing" {
            waiting.append(
                "peer link \(link.address): \(link.state)\(link.lastError.map { " (\($0))" } ?? "")")
        }
        for peer in connected {
            if let error = peer.lastError { waiting.append("peer \(peer.replica): \(error)") }
        }
        let pending = connected.reduce(0) { $0 + $1.pendingOutgoing }
        if pending > 0 { waiting.append("\(pending) change(s) pending for peers") }
        let incoming = connected.reduce(0) { $0 + $1.pendingIncoming }
        if incoming > 0 { waiting.append("\(incoming) change(s) from peers not stored yet") }
        for peer in connected where pending == 0 && incoming == 0 && !peer.agrees {
            waiting.append("peer \(peer.replica): \(peer.agreement)")
        }
        for hub in status.hubs {
            if !hub.isConnected {
                waiting.append("hub \(hub.address): not connected\(hub.lastError.map { " (\($0))" } ?? "")")
            } else if hub.pendingUp > 0 {
                waiting.append("hub \(hub.address): \(hub.pendingUp) change(s) to push")
            } else if hub.pendingDown > 0 {
                waiting.append("hub \(hub.address): \(hub.pendingDown) change(s) to pull")
            } else if !hub.agreement.hasPrefix("agreed") {
                waiting.append("hub \(hub.address): \(hub.agreement)")
            }
        }
        for folder in status.folders {
            if let error = folder.lastError {
                waiting.append("folder \(folder.path): \(error)")
            } else if folder.pendingUp > 0 {
                waiting.append("folder \(folder.path): \(folder.pendingUp) change(s) to write")
            }
            for replica in folder.replicas where !replica.isRead || replica.agreement == "diverged" {
                waiting.append(
                    "folder \(folder.path): replica \(replica.replica) \(replica.agreement)"
                        + (replica.waitingFor.map { ", waiting for \($0)" } ?? ""))
            }
        }
        return waiting.joined(separator: ", ")
    }
}
