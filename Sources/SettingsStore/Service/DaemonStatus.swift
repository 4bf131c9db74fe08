/// What a replica reports about itself (`status`): a daemon, or a database opened in process.
package struct DaemonStatus: Sendable, Equatable {
    /// One peer of the replica, as it reports it.
    package struct Peer: Sendable, Equatable {
        /// The peer's replica id.
        package let replica: ReplicaID
        /// The socket dialled for it, or `incoming`.
        package let address: String
        /// Whether a sync connection is open now.
        package let isConnected: Bool
        /// Local changes the peer has not acknowledged yet.
        package let pendingOutgoing: Int64
        /// The peer's changes not applied here yet.
        package let pendingIncoming: Int64
        /// When the peer last said anything, in milliseconds since 1970 (0: never).
        package let lastContactMilliseconds: Int64
        /// The last anti-entropy verdict: `agreed`, `agreed (n keys refused)`, `diverged (n keys)`,
        /// `checking` or `unknown`.
        package let agreement: String
        /// Keys anti-entropy found different with this peer and repaired, during this run.
        package let repairedKeys: Int

        /// Whether the peer was last found to hold this replica's entries (but those it refuses).
        package var agrees: Bool { agreement.hasPrefix("agreed") }
    }

    /// A link the replica dials, as it reports it.
    package struct Link: Sendable, Equatable {
        /// The socket dialled.
        package let address: String
        /// `connecting`, `handshaking` or `syncing`.
        package let state: String
        /// Why the last attempt failed, if it did.
        package let lastError: String?
        /// Attempts that failed in a row.
        package let failures: Int
    }

    /// The replica id.
    package let replica: ReplicaID
    /// Keys holding values.
    package let keys: Int
    /// Bytes those keys and values take.
    package let bytes: Int
    /// The replica's sequence number.
    package let sequence: Int64
    /// Connected clients (0 in process).
    package let clients: Int
    /// Active watches across clients (0 in process).
    package let watches: Int
    /// The database file (nil for a store in memory).
    package let database: String?
    /// The socket the daemon listens on (nil in process).
    package let socket: String?
    /// The daemon's pid (nil in process).
    package let pid: Int32?
    /// Seconds since the daemon started (nil in process).
    package let uptimeSeconds: Double?
    /// The release version of the replica's build.
    package let version: String
    /// The fingerprint of the replica's content (equal on converged replicas).
    package let digest: String?
    /// The peers this replica syncs or synced with during this run.
    package let peers: [Peer]
    /// The links this replica dials.
    package let links: [Link]
    /// The hubs this replica syncs through.
    package let hubs: [Hub]
    /// The daemon's dconf bridge, when it runs one.
    package let dconf: DconfBridgeStatus?

    /// A hub link, as the replica reports it.
    package struct Hub: Sendable, Equatable {
        /// The connection string without its password.
        package let address: String
        /// The namespace, once known.
        package let namespace: String?
        /// Whether a connection is up now.
        package let isConnected: Bool
        /// Local changes not pushed yet.
        package let pendingUp: Int64
        /// The hub's changes not applied here yet.
        package let pendingDown: Int64
        /// The last comparison of digests: `agreed`, `diverged (n keys)`, `checking`, `unknown`.
        package let agreement: String
        /// Why the last attempt failed, if it did.
        package let lastError: String?
        /// `listen` or `poll` (through a pooler in transaction pooling).
        package var mode = "listen"
    }

    /// Reads a `status` result.
    package init(fields: [String: JSONValue]) throws(SettingsError) {
        let fields = try JSONFields(.object(fields), what: "a status result")
        replica = try fields.replicaID("replica")
        keys = Int(try fields.integer("keys"))
        bytes = Int(try fields.integer("bytes"))
        sequence = try fields.integer("sequence")
        clients = Int(try fields.optionalInteger("clients") ?? 0)
        watches = Int(try fields.optionalInteger("watches") ?? 0)
        database = try fields.optionalString("database")
        socket = try fields.optionalString("socket")
        pid = try fields.optionalInteger("pid").map { Int32(truncatingIfNeeded: $0) }
        uptimeSeconds = try fields.optionalNumber("uptimeSeconds")
        version = try fields.string("version")
        digest = try fields.optionalString("digest")
        var peers: [Peer] = []
        for element in try fields.optionalArray("peers") ?? [] {
            let peer = try JSONFields(element, what: "each of 'peers'")
            peers.append(
                Peer(
                    replica: try peer.replicaID("replica"), address: try peer.optionalString("address") ?? "",
                    isConnected: try peer.bool("connected", default: false),
                    pendingOutgoing: try peer.optionalInteger("pendingOut") ?? 0,
                    pendingIncoming: try peer.optionalInteger("pendingIn") ?? 0,
                    lastContactMilliseconds: try peer.optionalInteger("lastContactMs") ?? 0,
                    agreement: try peer.optionalString("agreement") ?? "unknown",
                    repairedKeys: Int(clamping: try peer.optionalInteger("repairedKeys") ?? 0)))
        }
        self.peers = peers
        var links: [Link] = []
        for element in try fields.optionalArray("links") ?? [] {
            let link = try JSONFields(element, what: "each of 'links'")
            links.append(
                Link(
                    address: try link.string("address"), state: try link.string("state"),
                    lastError: try link.optionalString("lastError"),
                    failures: Int(clamping: try link.optionalInteger("failures") ?? 0)))
        }
        self.links = links
        var hubs: [Hub] = []
        for element in try fields.optionalArray("hubs") ?? [] {
            let hub = try JSONFields(element, what: "each of 'hubs'")
            hubs.append(
                Hub(
                    address: try hub.string("address"), namespace: try hub.optionalString("namespace"),
                    isConnected: try hub.bool("connected", default: false),
                    pendingUp: try hub.optionalInteger("pendingUp") ?? 0,
                    pendingDown: try hub.optionalInteger("pendingDown") ?? 0,
                    agreement: try hub.optionalString("agreement") ?? "unknown",
                    lastError: try hub.optionalString("lastError"),
                    mode: try hub.optionalString("mode") ?? "listen"))
        }
        self.hubs = hubs
        dconf = try fields.members["dconf"].map { json throws(SettingsError) in
            let bridge = try JSONFields(json, what: "'dconf'")
            var status = DconfBridgeStatus(dirs: try bridge.strings("dirs", limit: 10_000) ?? [])
            status.isRunning = try bridge.bool("running", default: false)
            status.keysFromDconf = Int(clamping: try bridge.optionalInteger("keysFromDconf") ?? 0)
            status.keysToDconf = Int(clamping: try bridge.optionalInteger("keysToDconf") ?? 0)
            status.changeSets = Int(clamping: try bridge.optionalInteger("changeSets") ?? 0)
            status.lockedPaths = try bridge.strings("locked", limit: 1_000_000) ?? []
            status.lastError = try bridge.optionalString("lastError")
            return status
        }
    }
}
