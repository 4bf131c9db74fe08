import SettingsStore

/// What a dconf bridge is doing, as `status` shows it.
package struct DconfBridgeStatus: Sendable, Equatable {
    /// The dconf dirs it mirrors (`/org/gnome/`).
    package var dirs: [String]
    /// Whether it is connected to dconf and watching.
    package var isRunning = false
    /// Keys taken from dconf into the store since it started.
    package var keysFromDconf = 0
    /// Keys written to dconf since it started.
    package var keysToDconf = 0
    /// Change sets written to dconf since it started (a burst of keys is written as one).
    package var changeSets = 0
    /// Keys the site's dconf profile locks: the bridge leaves them alone.
    package var lockedPaths: [String] = []
    /// The last thing that went wrong, if anything did.
    package var lastError: String?

    /// The status of a bridge of `dirs` that has not started.
    package init(dirs: [String]) {
        self.dirs = dirs
    }
}
