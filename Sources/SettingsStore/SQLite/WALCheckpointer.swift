internal import CSQLite
import Dispatch
import Synchronization

/// Copies a WAL database's committed pages into the database file on a queue of its own, so a
/// commit seldom waits for that copy.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, copying the
/// whole log and syncing the file while the writer waits: an initial sync of 100,000 keys spent
/// 7–8 % of its time there. Attached to a connection, this replaces it. Once the log holds
/// `backgroundPages` pages after a commit, a passive checkpoint (which never blocks the writer)
/// runs on a connection of its own. The writer starts the log over only when a checkpoint has
/// copied all of it, which a writer that never pauses does not allow: at `stallPages` (the
/// threshold this store used before) the committing connection checkpoints itself, copying only
/// what the background passes left, so the log stays as small as it was.
///
/// Unchecked Sendable: the connection is used on `queue` only, the flag is an atomic.
final class WALCheckpointer: @unchecked Sendable {  // connection on `queue` only
    /// Pages in the log after a commit that ask for a checkpoint in the background (SQLite's
    /// automatic checkpoint comes at 1,000).
    static let backgroundPages: Int32 = 1_000
    /// Pages at which the committing connection checkpoints itself (about 16 MiB of log).
    static let stallPages: Int32 = 4_000

    private var connection: SQLiteConnection?
    private let queue = DispatchQueue(label: "settingsd.checkpoint")
    private let isQueued = Atomic<Bool>(false)

    /// A checkpointer with a connection of its own to `path`, not yet attached.
    package init(path: String) throws(SettingsError) {
        let connection = try SQLiteConnection(path: path)
        // A connection learns the file is in WAL mode when it first reads it; until then a
        // checkpoint through it does nothing.
        _ = try connection.scalar("PRAGMA schema_version")
        self.connection = connection
    }

    /// Takes over `main`'s checkpoints (SQLite's automatic ones stop). Call `stop(detaching:)`
    /// before either is released.
    func attach(to main: SQLiteConnection) {
        main.setWALHook(context: Unmanaged.passUnretained(self).toOpaque(), Self.hook)
    }

    /// Detaches from `main`, waits for a checkpoint under way, and closes this one's connection
    /// (a checkpoint still queued then finds none and does nothing).
    func stop(detaching main: SQLiteConnection) {
        main.setWALHook(context: nil, nil)
        queue.sync { connection = nil }
    }

    /// Called by SQLite on the committing thread after each commit, with the log's size in pages.
    private static let hook: SQLiteConnection.WALHook = { context, db, name, pages in
        guard let context else { return SQLITE_OK }
        if pages >= stallPages {
            // The writer copies what the background passes left, and starts the log over at its
            // next write, which a log never copied whole between two commits does not allow.
            sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if pages >= backgroundPages {
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().request()
        }
        return SQLITE_OK
    }

    /// Queues one passive checkpoint, unless one is queued already.
    private func request() {
        guard !isQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            isQueued.store(false, ordering: .releasing)
            // A failure (the disk, a lock held past the busy time-out) leaves the pages in the
            // log, where readers find them: the next commit asks again.
            connection?.checkpointPassively()
        }
    }
}
