import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// How many descriptors clients may hold: the open-file limit less a reserve for the daemon's
/// own files (the database, its journal, the hub's and dconf's sockets, inotify) and for the
/// libraries under it (Dispatch opens files of its own, and aborts the process when it cannot).
/// A client that would take a descriptor inside the reserve is turned away at once.
struct DescriptorBudget {
    /// The open-file limit the daemon runs with.
    let limit: Int32
    /// Client descriptors are numbered below it: the kernel hands out the lowest free number,
    /// so a new descriptor at or above it means the reserve is being eaten into.
    let ceiling: Int32

    /// `RLIMIT_NOFILE`, as `getrlimit` takes it.
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

    /// The most descriptors kept in reserve, and the share of a small limit kept instead.
    static let largestReserve: Int32 = 64
    static let reserveShare: Int32 = 4

    /// The budget of the limit the process has now.
    init() {
        var limits = rlimit()
        let current = getrlimit(Self.openFiles, &limits) == 0 ? limits.rlim_cur : 1024
        self.init(limit: Int32(clamping: current))
    }

    /// The budget of `limit` descriptors: a reserve of a quarter of the limit, at most 64.
    init(limit: Int32) {
        self.limit = max(limit, 1)
        ceiling = self.limit - min(Self.largestReserve, self.limit / Self.reserveShare)
    }

    /// The most connections one user other than the daemon's own and root may hold: half of
    /// what clients may hold, so an allowed user cannot take every descriptor from the owner.
    var guestShare: Int {
        max(1, Int(ceiling) / 2)
    }

    /// Whether a client on descriptor `fd` fits the budget.
    func admits(_ fd: Int32) -> Bool {
        fd < ceiling
    }

    /// Raises the process's soft open-file limit to its hard limit (a daemon serves many
    /// clients; the soft limit is often 1,024 where the hard one is far higher). Returns the
    /// limit now in force.
    @discardableResult
    static func raiseSoftLimit() -> Int32 {
        var limits = rlimit()
        guard getrlimit(Self.openFiles, &limits) == 0 else { return 1024 }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(Self.openFiles, &raised) == 0 { limits = raised }
        }
        return Int32(clamping: limits.rlim_cur)
    }
}
