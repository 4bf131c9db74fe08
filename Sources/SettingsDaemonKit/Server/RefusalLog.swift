import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// What the daemon logs of the connections it refuses: the first refusal of each uid at once,
/// then at most one line per uid every `interval` milliseconds counting the rest, so that a user
/// who connects in a loop cannot fill the log (or the disk under it).
struct RefusalLog {
    /// The shortest time between two lines about one uid.
    static let interval = Duration.seconds(10)

    private var counts: [UInt32: (count: Int, since: Deadline)] = [:]
    private var logged: Set<UInt32> = []

    /// Records a refusal of `uid` at `now`; returns the line to log now, if any.
    mutating func refused(uid: UInt32, pid: Int32, now: Deadline, reason: String) -> String? {
        guard logged.contains(uid) else {
            logged.insert(uid)
            counts[uid] = (0, now)
            return
                "refused a connection from uid \(uid) (pid \(pid)): \(reason); further refusals of uid \(uid) are counted"
        }
        let (count, since) = counts[uid] ?? (0, now)
        counts[uid] = (count + 1, since)
        return nil
    }

    /// The summary lines due at `now`, for each uid refused since its last line.
    mutating func due(now: Deadline) -> [String] {
        var lines: [String] = []
        for (uid, entry) in counts where entry.count > 0 && now - entry.since >= Self.interval {
            lines.append(
                "refused \(entry.count) more connection(s) from uid \(uid) in the last \(Int((now - entry.since).seconds)) s"
            )
            counts[uid] = (0, now)
        }
        return lines
    }
}
