package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Who a client may take for its daemon, checked on the connected socket before anything is
/// sent (`SO_PEERCRED`): a process of the client's own user or of root, or of a user named in
/// `$SETTINGSD_TRUSTED_UIDS` (comma-separated: the users whose daemons, shared with
/// `--allow-uid`, this user talks to). Anyone may make `/tmp/settingsd-<uid>` first and listen
/// there; a check of the path alone cannot tell such an impostor from the user's daemon.
package enum DaemonTrust {
    /// Connects to the daemon (or replica) at `path` and checks who listens there.
    package static func connect(path: String) throws(SettingsError) -> Int32 {
        let fd = try UnixSocket.connect(path: path)
        do throws(SettingsError) {
            try check(fd, path: path)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Throws `accessDenied` unless the process at the other end of `fd`, connected to `path`,
    /// runs as a trusted user.
    package static func check(_ fd: Int32, path: String) throws(SettingsError) {
        guard let peer = UnixSocket.peerCredentials(fd) else {
            throw SettingsError(
                .accessDenied, "cannot tell who listens on '\(path)' (SO_PEERCRED failed)", path: path)
        }
        let me = getuid()
        guard peer.uid != me, peer.uid != 0, !trustedUIDs.contains(peer.uid) else { return }
        throw SettingsError(
            .accessDenied,
            "the process listening on '\(path)' runs as uid \(peer.uid), not as you (uid \(me)) or root: not trusting it with your settings (if it is a daemon that user shares with you, add \(peer.uid) to SETTINGSD_TRUSTED_UIDS)",
            path: path)
    }

    /// The uids in `$SETTINGSD_TRUSTED_UIDS`.
    static var trustedUIDs: Set<UInt32> {
        guard let value = getenv("SETTINGSD_TRUSTED_UIDS") else { return [] }
        return Set(
            String(cString: value).split(separator: ",").compactMap { UInt32($0.filter { $0 != " " }) })
    }
}
