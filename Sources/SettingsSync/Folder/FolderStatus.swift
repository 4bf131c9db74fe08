public import SettingsStore

/// A synced folder link's state, as `Replicator.folders` and `settingsd status` report it.
public struct FolderStatus: Sendable, Equatable {
    /// The folder.
    public var path: String
    /// Whether the folder is being watched (false while it is missing or unreadable).
    public var isWatching = false
    /// This replica's files cover its local sequence numbers through this.
    public var publishedThrough: Int64 = 0
    /// Local changes not yet written to the folder.
    public var pendingUp: Int64 = 0
    /// Every other replica found in the folder.
    public var replicas: [Replica] = []
    /// Files in the folder that are not settingsd's, or a syncer's copies, skipped.
    public var ignoredFiles = 0
    /// settingsd files that were whole but wrong (another format, damaged entries), never applied.
    public var refusedFiles = 0
    /// The last failure, in words, if the last attempt failed.
    public var lastError: String?
    /// Why this replica last took a new id here (its folder showed a copy of its store), if it did.
    public var lastFork: String?
    /// The id of the key the folder is sealed under (end-to-end encrypted), nil while plain.
    public var sealedUnder: String?
    /// Sealed entries (or plain files in a sealed folder) refused since the link started.
    public var sealedRowsRefused = 0
    /// The last of them, in words.
    public var lastSealRefusal: String?

    /// Another replica writing in the folder.
    public struct Replica: Sendable, Equatable {
        /// Its id (the name of its folder).
        public var replica: ReplicaID
        /// Its files applied here, contiguously, through this sequence number of its.
        public var readThrough: Int64
        /// How far its files reach, as its state file says, if it wrote one.
        public var publishedThrough: Int64?
        /// The last of its files applied here.
        public var lastFile: String?
        /// `agreed` (both read each other's files and hold equal digests), `reading` (its
        /// files are not all here or not all applied), `not read by it yet` (it has not read
        /// this replica's latest files), `diverged` (both read everything yet they differ: this
        /// replica writes a snapshot to repair it) or `unknown` (no state file from it yet).
        public var agreement: String
        /// A file of its that is not whole yet, or a gap in its files, that reading waits for.
        public var waitingFor: String?
    }

    /// A status for `path` before the link has looked at it.
    public init(path: String) {
        self.path = path
    }

    /// Whether everything is written and every other replica's published files are read here.
    public var isCaughtUp: Bool {
        pendingUp == 0 && lastError == nil
            && replicas.allSatisfy { replica in
                replica.publishedThrough.map { replica.readThrough >= $0 } ?? true
            }
    }
}
