import SettingsStore

/// Keeps a store in sync through a folder that something else syncs between machines
/// (Syncthing, Nextcloud, Dropbox, an rclone mount, a USB stick): each replica writes only files
/// of its own, once, under new names, and reads the others' as they appear (inotify; no
/// polling). See docs/SYNC.md for the folder's format.
///
/// ```swift
/// let replicator = Replicator(settings: settings)
/// let folder = try replicator.sync(withFolder: "/home/ana/Sync/settings")
/// folder.status.replicas   // every other machine writing there, and whether they agree
/// ```
public final class FolderLink: Sendable {
    let connector: FolderConnector
    /// The replicator that relays the store's commits to this link: kept alive as long as the link.
    private let owner: any Sendable

    init(_ connector: FolderConnector, owner: any Sendable) {
        self.connector = connector
        self.owner = owner
    }

    deinit {
        connector.stop()
    }

    /// The folder.
    public var path: String { connector.root }

    /// The link's state now.
    public var status: FolderStatus { connector.status }

    /// Stops watching and writing.
    public func stop() {
        connector.stop()
    }
}
