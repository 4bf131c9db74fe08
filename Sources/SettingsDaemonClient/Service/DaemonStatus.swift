package import SettingsStore
import SettingsWire

/// What a replica reports about itself (`status`): a daemon, or a database opened in process.
package struct DaemonStatus: Sendable, Equatable {
    /// One peer of the replica, as it reports it.
    package struct Peer: Sendable, Equatable {
        /// The peer's replica id.
        package var replica: ReplicaID
        /// The socket dialled for it, or `incoming`.
        package var address = ""
        /// Whether a sync connection is open now.
        package var isConnected = false
        /// Sync connections open now.
        package var connections = 0
        /// Local changes the peer has not acknowledged yet.
        package var pendingOutgoing: Int64 = 0
        /// The peer's changes not applied here yet.
        package var pendingIncoming: Int64 = 0
        /// The last local sequence number sent to the peer.
        package var sentThrough: Int64 = 0
        /// The last local sequence number the peer acknowledged.
        package var acknowledgedThrough: Int64 = 0
        /// The last sequence number of the peer's applied here.
        package var receivedThrough: Int64 = 0
        /// When the peer last said anything, in milliseconds since 1970 (0: never).
        package var lastContactMilliseconds: Int64 = 0
        /// The last anti-entropy verdict: `agreed`, `agreed (n keys refused)`, `diverged (n keys)`,
        /// `checking` or `unknown`.
        package var agreement = "unknown"
        /// Keys anti-entropy found different with this peer and repaired, during this run.
        package var repairedKeys = 0
        /// The peer's entries this replica refused (its schema, its limits) and does not hold.
        package var refusedKeys = 0
        /// Why changes between the two are not being stored, while they are not.
        package var lastError: String?
        /// How far the peer's clock is ahead of this one (negative: behind), in milliseconds.
        package var clockOffsetMilliseconds: Int64 = 0
        /// The peer's entries stamped beyond this clock's bound.
        package var entriesAheadOfClock = 0

        /// A peer known by its replica id.
        package init(replica: ReplicaID) {
            self.replica = replica
        }

        /// Whether the peer was last found to hold this replica's entries (but those it refuses).
        package var agrees: Bool { agreement.hasPrefix("agreed") }
    }

    /// A link the replica dials, as it reports it.
    package struct Link: Sendable, Equatable {
        /// The socket dialled.
        package var address: String
        /// `connecting`, `handshaking` or `syncing`.
        package var state: String
        /// The replica at the other end, once known.
        package var replica: ReplicaID?
        /// Why the last attempt failed, if it did.
        package var lastError: String?
        /// Attempts that failed in a row.
        package var failures = 0

        package init(
            address: String, state: String, replica: ReplicaID? = nil, lastError: String? = nil,
            failures: Int = 0
        ) {
            self.address = address
            self.state = state
            self.replica = replica
            self.lastError = lastError
            self.failures = failures
        }
    }

    /// A dconf bridge, as the daemon reports it.
    package struct Dconf: Sendable, Equatable {
        /// The dconf dirs it mirrors (`/org/gnome/`).
        package var dirs: [String]
        /// Whether it is connected to dconf and watching.
        package var isRunning = false
        /// Keys taken from dconf into the store since it started.
        package var keysFromDconf = 0
        /// Keys written to dconf since it started.
        package var keysToDconf = 0
        /// Change sets written to dconf since it started.
        package var changeSets = 0
        /// Keys the site's dconf profile locks: the bridge leaves them alone.
        package var lockedPaths: [String] = []
        /// The last thing that went wrong, if anything did.
        package var lastError: String?

        package init(dirs: [String]) {
            self.dirs = dirs
        }
    }

    /// A synced folder link, as the daemon reports it.
    package struct Folder: Sendable, Equatable {
        /// The folder.
        package var path: String
        /// Whether it is watched now.
        package var isWatching = false
        /// Local changes not written to the folder yet.
        package var pendingUp: Int64 = 0
        /// This replica's files cover its sequence numbers through this.
        package var publishedThrough: Int64 = 0
        /// Every other replica writing there.
        package var replicas: [Replica] = []
        /// Files skipped (not settingsd's, a syncer's copies) and refused (whole but wrong).
        package var ignoredFiles = 0
        package var refusedFiles = 0
        /// The last thing that went wrong, and why this replica last took a new id there.
        package var lastError: String?
        package var lastFork: String?
        /// The key the folder is sealed under (nil: plain), sealed entries refused, the last one.
        package var sealedUnder: String?
        package var sealedRowsRefused = 0
        package var lastSealRefusal: String?

        /// Another replica in the folder.
        package struct Replica: Sendable, Equatable {
            package var replica: ReplicaID
            /// Its files applied here, contiguously, through this.
            package var readThrough: Int64
            /// How far its files reach, by its state file.
            package var publishedThrough: Int64?
            /// `agreed`, `reading`, `not read by it yet`, `diverged` or `unknown`.
            package var agreement: String
            /// What reading waits for (a file not whole yet, a gap).
            package var waitingFor: String?

            package init(
                replica: ReplicaID, readThrough: Int64, publishedThrough: Int64?, agreement: String,
                waitingFor: String? = nil
            ) {
                self.replica = replica
                self.readThrough = readThrough
                self.publishedThrough = publishedThrough
                self.agreement = agreement
                self.waitingFor = waitingFor
            }

            /// Whether every file it published is applied here.
            package var isRead: Bool { publishedThrough.map { readThrough >= $0 } ?? true }
        }

        package init(path: String) {
            self.path = path
        }
    }

    /// A hub link, as the replica reports it.
    package struct Hub: Sendable, Equatable {
        /// The connection string without its password.
        package var address: String
        /// The namespace, once known.
        package var namespace: String?
        /// Whether a connection is up now.
        package var isConnected = false
        /// When the hub last answered, in milliseconds since 1970 (0: never).
        package var lastContactMilliseconds: Int64 = 0
        /// Local changes not pushed yet.
        package var pendingUp: Int64 = 0
        /// The hub's changes not applied here yet.
        package var pendingDown: Int64 = 0
        /// The last comparison of digests: `agreed`, `diverged (n keys)`, `checking`, `unknown`.
        package var agreement = "unknown"
        /// Keys found different with the hub and repaired, during this run.
        package var repairedKeys = 0
        /// Why the last attempt failed, if it did.
        package var lastError: String?
        /// `listen` or `poll` (through a pooler in transaction pooling).
        package var mode = "listen"
        /// The interval of the next poll, in seconds, when polling.
        package var pollSeconds: Double?
        /// The longest interval between polls, in seconds, when polling: the namespace's machines
        /// over the hub's poll rate, 5 s at least.
        package var longestPollSeconds: Double?
        /// The machines the namespace saw in the last week, as the hub last said, when polling.
        package var pollMachines: Int64?
        /// The polls a second the hub allows a namespace's machines together, when polling.
        package var pollRate: Int64?
        /// The last time the hub's numbering went back (a restore, a failover), in words.
        package var lastRewind: String?
        /// The last account change (another namespace), in words.
        package var lastAccountChange: String?
        /// How far the hub's clock is ahead of this one (negative: behind), in milliseconds.
        package var clockOffsetMilliseconds: Int64 = 0
        /// Entries from the hub stamped beyond this clock's bound.
        package var entriesAheadOfClock = 0
        /// The key the namespace is sealed under (nil: plain), sealed rows refused, the last one.
        package var sealedUnder: String?
        package var sealedRowsRefused = 0
        package var lastSealRefusal: String?

        /// A hub at `address`.
        package init(address: String) {
            self.address = address
        }
    }

    /// The replica id.
    package var replica: ReplicaID
    /// The names of the replicas this one knows (itself, its peers, those a hub or folder
    /// listed), by id.
    package var names: [ReplicaID: String] = [:]
    /// Keys holding values.
    package var keys = 0
    /// Bytes those keys and values take.
    package var bytes = 0
    /// The replica's sequence number.
    package var sequence: Int64 = 0
    /// Records the history keeps.
    package var historyRecords: Int?
    /// Connected clients (0 in process).
    package var clients = 0
    /// Active watches across clients (0 in process).
    package var watches = 0
    /// The database file (nil for a store in memory).
    package var database: String?
    /// The socket the daemon listens on (nil in process).
    package var socket: String?
    /// The daemon's pid (nil in process).
    package var pid: Int32?
    /// Seconds since the daemon started (nil in process).
    package var uptimeSeconds: Double?
    /// The release version of the replica's build.
    package var version = SettingsdVersion.current
    /// The fingerprint of the replica's content (equal on converged replicas).
    package var digest: String?
    /// The peers this replica syncs or synced with during this run.
    package var peers: [Peer] = []
    /// The links this replica dials.
    package var links: [Link] = []
    /// The hubs this replica syncs through.
    package var hubs: [Hub] = []
    /// The synced folders this replica syncs through.
    package var folders: [Folder] = []
    /// The sync key's id and where it is kept (never the key), when the daemon holds one.
    package var syncKey: String?
    /// The hub's fleet policies in force, in words (nil: none).
    package var policy: String?
    /// The daemon's dconf bridge, when it runs one.
    package var dconf: Dconf?
    /// The daemon's Flatpak keyfile bridge, when it runs one: `dirs` are the apps, the counts
    /// the keys taken from and written to their keyfiles.
    package var flatpak: Dconf?
    /// Fields of a newer daemon that this build does not know, kept so they still show.
    package var otherFields: [String: JSONValue] = [:]

    /// The status of the replica `replica`, with nothing else known yet.
    package init(replica: ReplicaID) {
        self.replica = replica
    }
}

extension DaemonStatus {
    /// `replica` by its name and the start of its id when its name is known, else by its id.
    package func describe(_ replica: ReplicaID) -> String {
        guard let name = names[replica] else { return replica.description }
        return "\(name) (\(replica.description.prefix(8)))"
    }
}
