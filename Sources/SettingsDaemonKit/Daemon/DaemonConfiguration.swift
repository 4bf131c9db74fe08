public import SettingsDaemonClient
package import SettingsGNOME
public import SettingsStore
public import SettingsSync
import SettingsWire

/// Everything a `SettingsDaemon` serves and how: what `settingsd run` reads from its command
/// line. Every field has the default `settingsd run` uses without flags.
///
/// ```swift
/// var configuration = DaemonConfiguration()          // the default database and socket
/// configuration.peers = [UnixSocketChannel(path: "/run/user/1000/other.sock")]
/// configuration.store.durability = .full
/// ```
public struct DaemonConfiguration: Sendable {
    /// The database file (created with its folders if missing).
    public var databasePath: String
    /// The store's durability, limits, history and tombstone lifetime. Its `policy` is replaced
    /// by what the schema and system folders hold when the daemon opens the store.
    public var store: SettingsConfiguration
    /// The socket, frame size, allowed users, idle time-out and logger.
    public var server: ServerConfiguration
    /// Folders of schema files (`*.json`), read in order.
    public var schemaDirectories: [String]
    /// The folder holding `defaults.d/` and `locks.d/`.
    public var systemDirectory: String
    /// Whether keys no schema declares are refused.
    public var isStrict: Bool
    /// Other replicas (daemons) to sync with, on their sockets or over SSH, dialled with backoff.
    public var peers: [any ReplicaChannel]
    /// Folders another program keeps in sync between machines (Syncthing, Nextcloud, Dropbox),
    /// to sync through.
    public var folders: [String]
    /// Folders of `folders` synced in the clear even with a `keyring`.
    public var plainFolders: Set<String>
    /// A PostgreSQL hub to sync with, if any.
    public var hub: HubConfiguration?
    /// The sync keys: with them, what goes to the hub and every folder is sealed (end-to-end
    /// encrypted) unless marked plain; nil, everything travels in the clear and sealed targets
    /// are refused. `settingsd run` reads them from the user's key store (`settingsd keys`).
    public var keyring: SyncKeyring?
    /// Where the keys are kept, in words, for `status` (never what they are).
    public var keyringLocation: String?
    /// dconf dirs to mirror both ways (`/org/gnome/`), through the user's session bus.
    public var dconfDirs: [String]
    /// The name the replica goes by in `status`, `history` and the hub (nil: the machine's host
    /// name), told to every peer it meets.
    public var replicaName: String?
    /// The Flatpak apps whose settings keyfiles are mirrored both ways (`run --flatpak`), and
    /// where Flatpak keeps them; nil: none.
    package var flatpak: (apps: [String], layout: FlatpakLayout)?

    /// The extensions the policy is read with: GNOME's, and the schemas of the Flatpak apps
    /// mirrored.
    package var schemaExtensions: SchemaExtensions {
        guard let flatpak else { return .gnome }
        var extensions = SchemaExtensions.gnome
        extensions.sources.append(FlatpakSchemaSource(layout: flatpak.layout, apps: flatpak.apps))
        return extensions
    }

    /// A configuration for `databasePath` served on `socketPath`, with the defaults of
    /// `settingsd run`.
    public init(databasePath: String = SettingsPaths.database, socketPath: String = SettingsPaths.socket) {
        self.databasePath = databasePath
        self.store = SettingsConfiguration()
        self.server = ServerConfiguration(socketPath: socketPath)
        self.schemaDirectories = SettingsPolicy.defaultSchemaDirectories
        self.systemDirectory = SettingsPolicy.defaultSystemDirectory
        self.isStrict = false
        self.peers = []
        self.folders = []
        self.plainFolders = []
        self.hub = nil
        self.keyring = nil
        self.dconfDirs = []
    }

    /// Where the daemon logs.
    package var logger: SettingsLogger { server.logger }
}
