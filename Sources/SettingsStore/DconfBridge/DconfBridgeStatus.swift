/// What a dconf bridge is doing, as `status` shows it.
public struct DconfBridgeStatus: Sendable, Equatable {
    /// The dconf dirs it mirrors (`/org/gnome/`).
    public var dirs: [String]
    /// Whether it is connected to dconf and watching.
    public var isRunning = false
    /// Keys taken from dconf into the store since it started.
    public var keysFromDconf = 0
    /// Keys written to dconf since it started.
    public var keysToDconf = 0
    /// Change sets written to dconf since it started (a burst of keys is written as one).
    public var changeSets = 0
    /// Keys the site's dconf profile locks: the bridge leaves them alone.
    public var lockedPaths: [String] = []
    /// The last thing that went wrong, if anything did.
    public var lastError: String?

    /// The status of a bridge of `dirs` that has not started.
    public init(dirs: [String]) {
        self.dirs = dirs
    }
}
