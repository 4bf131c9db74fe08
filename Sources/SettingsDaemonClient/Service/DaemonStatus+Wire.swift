package import SettingsStore
import SettingsWire

/// The `status` result on the wire (see `docs/PROTOCOL.md`): what `fields` writes, `init(fields:)`
/// reads back whole.
extension DaemonStatus {
    /// The result's fields.
    package var fields: [String: JSONValue] {
        var fields = otherFields
        fields["replica"] = .string(replica.description)
        fields["keys"] = .integer(Int64(keys))
        fields["bytes"] = .integer(Int64(bytes))
        fields["sequence"] = .integer(sequence)
        fields["historyRecords"] = historyRecords.map { .integer(Int64($0)) }
        fields["clients"] = .integer(Int64(clients))
        fields["watches"] = .integer(Int64(watches))
        fields["database"] = database.map { .string($0) } ?? .null
        fields["socket"] = socket.map { .string($0) }
        fields["pid"] = pid.map { .integer(Int64($0)) }
        fields["uptimeSeconds"] = uptimeSeconds.map { .double($0) }
        fields["version"] = .string(version)
        fields["digest"] = digest.map { .string($0) }
        fields["peers"] = .array(peers.map(\.json))
        fields["links"] = .array(links.map(\.json))
        fields["hubs"] = .array(hubs.map(\.json))
        if !folders.isEmpty { fields["folders"] = .array(folders.map(\.json)) }
        fields["dconf"] = dconf?.json
        fields["flatpak"] = flatpak?.flatpakJSON
        fields["syncKey"] = syncKey.map { .string($0) }
        fields["policy"] = policy.map { .string($0) }
        if !names.isEmpty {
            fields["names"] = .object(
                Dictionary(uniqueKeysWithValues: names.map { ($0.key.description, .string($0.value)) }))
        }
        return fields
    }

    /// The fields this build knows; the rest are kept in `otherFields`.
    private static let knownFields: Set<String> = [
        "replica", "keys", "bytes", "sequence", "historyRecords", "clients", "watches", "database", "socket",
        "pid", "uptimeSeconds", "version", "digest", "peers", "links", "hubs", "dconf", "flatpak",
        "folders", "syncKey", "names", "policy",
    ]

    /// Reads a `status` result.
    package init(fields: [String: JSONValue]) throws(SettingsError) {
        let members = try JSONFields(.object(fields), what: "a status result")
        self.init(replica: try members.replicaID("replica"))
        if case .object(let known)? = members.members["names"] {
            for (id, json) in known {
                if let replica = ReplicaID(id), case .string(let name) = json { names[replica] = name }
            }
        }
        keys = Int(clamping: try members.integer("keys"))
        bytes = Int(clamping: try members.integer("bytes"))
        sequence = try members.integer("sequence")
        historyRecords = try members.optionalInteger("historyRecords").map { Int(clamping: $0) }
        clients = Int(clamping: try members.optionalInteger("clients") ?? 0)
        watches = Int(clamping: try members.optionalInteger("watches") ?? 0)
        database = try members.optionalString("database")
        socket = try members.optionalString("socket")
        pid = try members.optionalInteger("pid").map { Int32(truncatingIfNeeded: $0) }
        uptimeSeconds = try members.optionalNumber("uptimeSeconds")
        version = try members.string("version")
        digest = try members.optionalString("digest")
        syncKey = try members.optionalString("syncKey")
        policy = try members.optionalString("policy")
        peers = try (members.optionalArray("peers") ?? []).map { json throws(SettingsError) in
            try Peer(json: json)
        }
        links = try (members.optionalArray("links") ?? []).map { json throws(SettingsError) in
            try Link(json: json)
        }
        hubs = try (members.optionalArray("hubs") ?? []).map { json throws(SettingsError) in
            try Hub(json: json)
        }
        folders = try (members.optionalArray("folders") ?? []).map { json throws(SettingsError) in
            try Folder(json: json)
        }
        dconf = try fields["dconf"].map { json throws(SettingsError) in try DaemonStatus.Dconf(json: json) }
        flatpak = try fields["flatpak"].map { json throws(SettingsError) in
            try DaemonStatus.Dconf(flatpakJSON: json)
        }
        otherFields = fields.filter { !Self.knownFields.contains($0.key) }
    }
}

extension DaemonStatus.Peer {
    fileprivate var json: JSONValue {
        var members: [String: JSONValue] = [
            "replica": .string(replica.description), "address": .string(address),
            "connected": .bool(isConnected),
            "connections": .integer(Int64(connections)), "lastContactMs": .integer(lastContactMilliseconds),
            "pendingOut": .integer(pendingOutgoing), "pendingIn": .integer(pendingIncoming),
            "sentThrough": .integer(sentThrough), "acknowledgedThrough": .integer(acknowledgedThrough),
            "receivedThrough": .integer(receivedThrough), "agreement": .string(agreement),
            "repairedKeys": .integer(Int64(repairedKeys)), "refusedKeys": .integer(Int64(refusedKeys)),
            "clockOffsetMs": .integer(clockOffsetMilliseconds),
            "entriesAheadOfClock": .integer(Int64(entriesAheadOfClock)),
        ]
        if let lastError { members["lastError"] = .string(lastError) }
        return .object(members)
    }

    fileprivate init(json: JSONValue) throws(SettingsError) {
        let peer = try JSONFields(json, what: "each of 'peers'")
        self.init(replica: try peer.replicaID("replica"))
        address = try peer.optionalString("address") ?? ""
        isConnected = try peer.bool("connected", default: false)
        connections = Int(clamping: try peer.optionalInteger("connections") ?? 0)
        lastContactMilliseconds = try peer.optionalInteger("lastContactMs") ?? 0
        pendingOutgoing = try peer.optionalInteger("pendingOut") ?? 0
        pendingIncoming = try peer.optionalInteger("pendingIn") ?? 0
        sentThrough = try peer.optionalInteger("sentThrough") ?? 0
        acknowledgedThrough = try peer.optionalInteger("acknowledgedThrough") ?? 0
        receivedThrough = try peer.optionalInteger("receivedThrough") ?? 0
        agreement = try peer.optionalString("agreement") ?? "unknown"
        repairedKeys = Int(clamping: try peer.optionalInteger("repairedKeys") ?? 0)
        refusedKeys = Int(clamping: try peer.optionalInteger("refusedKeys") ?? 0)
        clockOffsetMilliseconds = try peer.optionalInteger("clockOffsetMs") ?? 0
        entriesAheadOfClock = Int(clamping: try peer.optionalInteger("entriesAheadOfClock") ?? 0)
        lastError = try peer.optionalString("lastError")
    }
}

extension DaemonStatus.Link {
    fileprivate var json: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address), "state": .string(state), "failures": .integer(Int64(failures)),
        ]
        members["replica"] = replica.map { .string($0.description) }
        members["lastError"] = lastError.map { .string($0) }
        return .object(members)
    }

    fileprivate init(json: JSONValue) throws(SettingsError) {
        let link = try JSONFields(json, what: "each of 'links'")
        self.init(
            address: try link.string("address"), state: try link.string("state"),
            replica: try link.optionalString("replica") == nil ? nil : try link.replicaID("replica"),
            lastError: try link.optionalString("lastError"),
            failures: Int(clamping: try link.optionalInteger("failures") ?? 0))
    }
}

extension DaemonStatus.Hub {
    fileprivate var json: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address), "connected": .bool(isConnected),
            "lastContactMs": .integer(lastContactMilliseconds), "pendingUp": .integer(pendingUp),
            "pendingDown": .integer(pendingDown), "agreement": .string(agreement),
            "repairedKeys": .integer(Int64(repairedKeys)), "mode": .string(mode),
            "clockOffsetMs": .integer(clockOffsetMilliseconds),
            "entriesAheadOfClock": .integer(Int64(entriesAheadOfClock)),
        ]
        members["namespace"] = namespace.map { .string($0) }
        members["pollSeconds"] = pollSeconds.map { .double($0) }
        members["longestPollSeconds"] = longestPollSeconds.map { .double($0) }
        members["pollMachines"] = pollMachines.map { .integer($0) }
        members["pollRate"] = pollRate.map { .integer($0) }
        members["lastRewind"] = lastRewind.map { .string($0) }
        members["lastAccountChange"] = lastAccountChange.map { .string($0) }
        members["lastError"] = lastError.map { .string($0) }
        members["sealedUnder"] = sealedUnder.map { .string($0) }
        if sealedRowsRefused > 0 { members["sealedRowsRefused"] = .integer(Int64(sealedRowsRefused)) }
        members["lastSealRefusal"] = lastSealRefusal.map { .string($0) }
        return .object(members)
    }

    fileprivate init(json: JSONValue) throws(SettingsError) {
        let hub = try JSONFields(json, what: "each of 'hubs'")
        self.init(address: try hub.string("address"))
        namespace = try hub.optionalString("namespace")
        isConnected = try hub.bool("connected", default: false)
        lastContactMilliseconds = try hub.optionalInteger("lastContactMs") ?? 0
        pendingUp = try hub.optionalInteger("pendingUp") ?? 0
        pendingDown = try hub.optionalInteger("pendingDown") ?? 0
        agreement = try hub.optionalString("agreement") ?? "unknown"
        repairedKeys = Int(clamping: try hub.optionalInteger("repairedKeys") ?? 0)
        lastError = try hub.optionalString("lastError")
        mode = try hub.optionalString("mode") ?? "listen"
        pollSeconds = try hub.optionalNumber("pollSeconds")
        longestPollSeconds = try hub.optionalNumber("longestPollSeconds")
        pollMachines = try hub.optionalInteger("pollMachines")
        pollRate = try hub.optionalInteger("pollRate")
        lastRewind = try hub.optionalString("lastRewind")
        lastAccountChange = try hub.optionalString("lastAccountChange")
        clockOffsetMilliseconds = try hub.optionalInteger("clockOffsetMs") ?? 0
        entriesAheadOfClock = Int(clamping: try hub.optionalInteger("entriesAheadOfClock") ?? 0)
        sealedUnder = try hub.optionalString("sealedUnder")
        sealedRowsRefused = Int(clamping: try hub.optionalInteger("sealedRowsRefused") ?? 0)
        lastSealRefusal = try hub.optionalString("lastSealRefusal")
    }
}

extension DaemonStatus.Folder {
    fileprivate var json: JSONValue {
        var members: [String: JSONValue] = [
            "path": .string(path), "watching": .bool(isWatching), "pendingUp": .integer(pendingUp),
            "publishedThrough": .integer(publishedThrough), "ignoredFiles": .integer(Int64(ignoredFiles)),
            "refusedFiles": .integer(Int64(refusedFiles)),
            "replicas": .array(
                replicas.map { replica in
                    var members: [String: JSONValue] = [
                        "replica": .string(replica.replica.description),
                        "readThrough": .integer(replica.readThrough),
                        "agreement": .string(replica.agreement),
                    ]
                    members["publishedThrough"] = replica.publishedThrough.map { .integer($0) }
                    members["waitingFor"] = replica.waitingFor.map { .string($0) }
                    return .object(members)
                }),
        ]
        members["lastError"] = lastError.map { .string($0) }
        members["lastFork"] = lastFork.map { .string($0) }
        members["sealedUnder"] = sealedUnder.map { .string($0) }
        if sealedRowsRefused > 0 { members["sealedRowsRefused"] = .integer(Int64(sealedRowsRefused)) }
        members["lastSealRefusal"] = lastSealRefusal.map { .string($0) }
        return .object(members)
    }

    fileprivate init(json: JSONValue) throws(SettingsError) {
        let folder = try JSONFields(json, what: "each of 'folders'")
        self.init(path: try folder.string("path"))
        isWatching = try folder.bool("watching", default: false)
        pendingUp = try folder.optionalInteger("pendingUp") ?? 0
        publishedThrough = try folder.optionalInteger("publishedThrough") ?? 0
        ignoredFiles = Int(clamping: try folder.optionalInteger("ignoredFiles") ?? 0)
        refusedFiles = Int(clamping: try folder.optionalInteger("refusedFiles") ?? 0)
        lastError = try folder.optionalString("lastError")
        lastFork = try folder.optionalString("lastFork")
        sealedUnder = try folder.optionalString("sealedUnder")
        sealedRowsRefused = Int(clamping: try folder.optionalInteger("sealedRowsRefused") ?? 0)
        lastSealRefusal = try folder.optionalString("lastSealRefusal")
        replicas = try (folder.optionalArray("replicas") ?? []).map { json throws(SettingsError) in
            let replica = try JSONFields(json, what: "each of a folder's 'replicas'")
            return Replica(
                replica: try replica.replicaID("replica"),
                readThrough: try replica.optionalInteger("readThrough") ?? 0,
                publishedThrough: try replica.optionalInteger("publishedThrough"),
                agreement: try replica.optionalString("agreement") ?? "unknown",
                waitingFor: try replica.optionalString("waitingFor"))
        }
    }
}

extension DaemonStatus.Dconf {
    fileprivate var json: JSONValue {
        var members: [String: JSONValue] = [
            "dirs": .array(dirs.map { .string($0) }), "running": .bool(isRunning),
            "keysFromDconf": .integer(Int64(keysFromDconf)), "keysToDconf": .integer(Int64(keysToDconf)),
            "changeSets": .integer(Int64(changeSets)), "locked": .array(lockedPaths.map { .string($0) }),
        ]
        members["lastError"] = lastError.map { .string($0) }
        return .object(members)
    }

    /// The Flatpak bridge's wire form: `apps`, `running`, `keysFromKeyfiles`, `keysToKeyfiles`,
    /// `lastError`.
    fileprivate var flatpakJSON: JSONValue {
        var members: [String: JSONValue] = [
            "apps": .array(dirs.map { .string($0) }), "running": .bool(isRunning),
            "keysFromKeyfiles": .integer(Int64(keysFromDconf)),
            "keysToKeyfiles": .integer(Int64(keysToDconf)),
        ]
        members["lastError"] = lastError.map { .string($0) }
        return .object(members)
    }

    fileprivate init(flatpakJSON json: JSONValue) throws(SettingsError) {
        let bridge = try JSONFields(json, what: "'flatpak'")
        self.init(dirs: try bridge.strings("apps", limit: 100_000) ?? [])
        isRunning = try bridge.bool("running", default: false)
        keysFromDconf = Int(clamping: try bridge.optionalInteger("keysFromKeyfiles") ?? 0)
        keysToDconf = Int(clamping: try bridge.optionalInteger("keysToKeyfiles") ?? 0)
        lastError = try bridge.optionalString("lastError")
    }

    fileprivate init(json: JSONValue) throws(SettingsError) {
        let bridge = try JSONFields(json, what: "'dconf'")
        self.init(dirs: try bridge.strings("dirs", limit: 10_000) ?? [])
        isRunning = try bridge.bool("running", default: false)
        keysFromDconf = Int(clamping: try bridge.optionalInteger("keysFromDconf") ?? 0)
        keysToDconf = Int(clamping: try bridge.optionalInteger("keysToDconf") ?? 0)
        changeSets = Int(clamping: try bridge.optionalInteger("changeSets") ?? 0)
        lockedPaths = try bridge.strings("locked", limit: 1_000_000) ?? []
        lastError = try bridge.optionalString("lastError")
    }
}
