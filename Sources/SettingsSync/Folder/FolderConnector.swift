import Dispatch
import SettingsStore
import SettingsWire
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The engine behind a `FolderLink`: on one serial queue it writes this replica's new entries
/// as batch files, reads the other replicas' files as inotify reports them, compacts its own
/// files into a snapshot, and keeps its state file. Nothing runs while nothing changes.
///
/// Unchecked Sendable: the engine's fields are confined to `queue`; what other threads read
/// (`status`, whether it stopped) is under the `shared` lock.
final class FolderConnector: @unchecked Sendable {  // engine state on its serial queue only
    struct Shared {
        var isStopped = false
        var status: FolderStatus
        /// Set while a write or a scan is queued, so a burst of commits or events costs one.
        var publishQueued = false
        var scanQueued: Set<String> = []
        var scanAllQueued = false
    }

    /// What this link knows of another replica's files.
    struct Reader {
        /// Names of its files applied past the contiguous cursor (arrived out of order).
        var appliedAhead: Set<String> = []
        /// Names of its files not whole yet when last read, with their size then.
        var incomplete: [String: Int] = [:]
        /// Its state file, as last read.
        var state: FolderReplicaState?
        var lastFile: String?
        var waitingFor: String?
    }

    /// The most replica folders read; more are skipped with a warning.
    static let maximumReplicas = 256
    /// The most entries per batch file written.
    static let batchEntries = 10_000
    /// Own batches are compacted into a snapshot when they hold more bytes than the last
    /// snapshot (so the folder never holds more than twice a snapshot, and each byte is written
    /// at most twice on average), or a mebibyte for a small store, or when they are this many
    /// files (a syncer handles each file on its own).
    static let compactionFiles = 1_000
    static let compactionBytes = 1 << 20

    let root: String
    /// The keys the link seals with (nil: none), and whether the folder is marked plain here.
    let keyring: SyncKeyring?
    let marksPlain: Bool
    let settings: Settings
    let logger: SettingsLogger?
    let queue = DispatchQueue(label: "settingsd.folder")
    let shared: Mutex<Shared>

    // Engine state: on `queue` only.
    var localID: ReplicaID
    var incarnation: UUID
    /// The own files cover local sequence numbers through this.
    var writtenThrough: Int64 = 0
    /// Local sequence numbers through this were considered for writing (some need none).
    var consideredThrough: Int64 = 0
    /// Own files: batches by name (with their last sequence number and size), the snapshot.
    var ownBatches: [String: (last: Int64, bytes: Int)] = [:]
    var ownSnapshot: (name: String, through: Int64, bytes: Int)?
    /// Set when this replica's own files have a gap: its next write is a snapshot.
    var needsSnapshot = false
    /// Local sequence numbers taken by entries applied from the folder: never written back.
    var fromFolder: [ClosedRange<Int64>] = []
    var readers: [ReplicaID: Reader] = [:]
    /// Own files of earlier incarnations whose lineage was checked.
    var lineageChecked: Set<String> = []
    /// Names warned about once (a syncer's copies, foreign files).
    var warned: Set<String> = []
    /// The last state file written, so an unchanged one is not written again.
    var lastState: FolderReplicaState?
    /// The replica that diverged, and this replica's sequence when it wrote a snapshot for it.
    var repairedAt: [ReplicaID: Int64] = [:]
    var watcher: FolderWatcher?
    var backoff = Backoff()
    /// Seals what this replica writes and opens what it reads, when the folder is sealed.
    var sealer: EntrySealer?
    /// Own files found sealed as the folder is.
    var sealChecked: Set<String> = []

    init(
        settings: Settings, root: String, keyring: SyncKeyring? = nil, marksPlain: Bool = false,
        logger: SettingsLogger?
    ) {
        self.settings = settings
        self.keyring = keyring
        self.marksPlain = marksPlain
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.logger = logger
        self.localID = settings.replicaID
        self.incarnation = settings.lineage.current.id
        shared = Mutex(Shared(status: FolderStatus(path: self.root)))
    }

    /// The folder of this replica's own files.
    var ownFolder: String { root + "/" + localID.description }

    /// The link's state now.
    var status: FolderStatus {
        let sequence = settings.sequence
        var status = shared.withLock { $0.status }
        status.pendingUp = max(0, sequence - status.publishedThrough)
        return status
    }

    var isStopped: Bool { shared.withLock { $0.isStopped } }

    /// Looks at the folder, reads what is there, writes what is new, and starts watching.
    func start() {
        queue.async { [self] in open() }
    }

    /// Stops watching and writing.
    func stop() {
        let wasRunning = shared.withLock { shared in
            defer { shared.isStopped = true }
            return !shared.isStopped
        }
        guard wasRunning else { return }
        queue.sync {
            watcher?.cancel()
            watcher = nil
        }
    }

    /// The store committed something: write it soon.
    func nudge() {
        let queued = shared.withLock { shared in
            defer { shared.publishQueued = true }
            return shared.publishQueued || shared.isStopped
        }
        guard !queued else { return }
        queue.async { [self] in
            shared.withLock { $0.publishQueued = false }
            guard !isStopped, watcher != nil else { return }
            run { () throws(SettingsError) in try publish() }
        }
    }

    /// Opens the folder (again, after a failure): makes this replica's folder, reads every
    /// replica's files, writes what is new and starts watching; on failure retries with backoff.
    func open() {
        guard !isStopped else { return }
        if settings.replicaID != localID || settings.lineage.current.id != incarnation {
            resetIdentity()
        }
        do throws(SettingsError) {
            try FileSystem.createDirectories(ownFolder)
            try joinSealing()
            if watcher == nil {
                let watcher = try FolderWatcher(root: root, queue: queue) { [weak self] changes in
                    self?.changed(changes)
                }
                // Its own folder too: files removed there are written again.
                watcher.watch(replica: localID.description)
                self.watcher = watcher
            }
            try scanOwnFolder()
            try scanAll()
            try publish()
            backoff.reset()
            update { $0.isWatching = true }
        } catch {
            watcher?.cancel()
            watcher = nil
            failed(error)
            let delay = backoff.next()
            queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.open() }
        }
    }

    /// This replica took a new id (or a new incarnation): its files start over in a new folder.
    func resetIdentity() {
        localID = settings.replicaID
        incarnation = settings.lineage.current.id
        (writtenThrough, consideredThrough) = (0, 0)
        ownBatches = [:]
        ownSnapshot = nil
        lastState = nil
        lineageChecked = []
    }

    /// inotify reported changes: read the replicas' folders they name.
    private func changed(_ changes: [FolderWatcher.Change]) {
        guard !isStopped else { return }
        run { () throws(SettingsError) in
            if changes.contains(.everything) {
                guard access(root, F_OK) == 0 else {
                    throw SettingsError(.io, "the folder '\(root)' is gone", path: root)
                }
                try scanOwnFolder()
                try scanAll()
            } else {
                for case .replica(let name) in changes {
                    if name == FolderFileName.sealName {
                        try joinSealing()
                        try scanOwnFolder()
                        try scanAll()
                    } else if name == localID.description {
                        try scanOwnFolder()
                    } else if let replica = replicaFolder(named: name) {
                        if readers[replica] == nil { watcher?.watch(replica: name) }
                        try scan(replica)
                    }
                }
            }
            try publish()
        }
    }

    /// Runs a step of the engine; a failure shows in `status`, and the folder is opened again
    /// with backoff.
    func run(_ step: () throws(SettingsError) -> Void) {
        do throws(SettingsError) {
            guard settings.replicaID == localID else {
                throw SettingsError(.replicaForked, "this replica took a new id; starting over in the folder")
            }
            try step()
            if shared.withLock({ $0.status.lastError != nil }) { update { $0.lastError = nil } }
        } catch {
            failed(error)
            watcher?.cancel()
            watcher = nil
            update { $0.isWatching = false }
            let delay = error.code == .replicaForked ? 0 : backoff.next()
            queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.open() }
        }
    }

    func update(_ change: (inout FolderStatus) -> Void) {
        shared.withLock { change(&$0.status) }
    }

    private func failed(_ error: SettingsError) {
        let isNew = shared.withLock { shared in
            defer { shared.status.lastError = error.message }
            return shared.status.lastError != error.message
        }
        logger?.log(isNew ? .warning : .debug, "folder \(root): \(error.message)")
    }

    /// Warns once about a name in the folder that is skipped.
    func warnOnce(_ path: String, _ message: String) {
        guard warned.insert(path).inserted else { return }
        update { $0.ignoredFiles += 1 }
        logger?.log(.warning, "folder \(root): \(message)")
    }
}
