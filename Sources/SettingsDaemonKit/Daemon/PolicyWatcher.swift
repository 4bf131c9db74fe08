import Dispatch
import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon's schemas, system defaults and locks come from, and what reloads them:
/// SIGHUP, or any change in their folders (inotify).
///
/// Unchecked Sendable: everything is set in `init` and never changes; the inotify source and
/// descriptor are used only on `queue`.
final class PolicyWatcher: @unchecked Sendable {  // immutable; the source lives on `queue`
    let schemaDirectories: [String]
    let systemDirectory: String
    let isStrict: Bool
    private let settings: Settings
    private let logger: SettingsLogger
    private let queue = DispatchQueue(label: "settingsd.policy")
    private let source: (any DispatchSourceRead)?
    private let inotify: Int32

    init(
        schemaDirectories: [String], systemDirectory: String, isStrict: Bool, settings: Settings,
        logger: SettingsLogger
    ) {
        self.schemaDirectories = schemaDirectories
        self.systemDirectory = systemDirectory
        self.isStrict = isStrict
        self.settings = settings
        self.logger = logger
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if inotify >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: inotify, queue: queue)
            source.setCancelHandler { [inotify] in close(inotify) }
            self.source = source
        } else {
            source = nil
        }
        watchFolders()
        source?.setEventHandler { [weak self] in self?.changed() }
        source?.resume()
    }

    deinit {
        source?.cancel()
    }

    /// Reads the folders again and applies what they say; a broken file keeps the policy in force
    /// and is logged.
    func reload(because reason: String) {
        queue.async { [self] in
            do throws(SettingsError) {
                let policy = try SettingsPolicy.load(
                    schemaDirectories: schemaDirectories, systemDirectory: systemDirectory,
                    isStrict: isStrict, extensions: .gnome)
                watchFolders()  // folders created since are watched from now on
                for warning in policy.warnings { logger.log(.warning, warning) }
                settings.apply(policy)
                logger.log(
                    .info,
                    "reloaded schemas, system defaults and locks (\(reason)): \(policy.schema.rules.count) rule(s), \(policy.systemDefaults.count) default(s), \(policy.locks.count) lock(s)"
                )
            } catch {
                logger.log(
                    .error, "not reloading (\(reason)), the previous rules stay in force: \(error.message)")
            }
        }
    }

    private func changed() {
        // Drain the events; one reload covers a burst (an editor writes, renames, deletes).
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(inotify, &buffer, buffer.count) > 0 {}
        queue.asyncAfter(deadline: .now() + 0.1) { [weak self] in self?.reload(because: "a file changed") }
    }

    /// Watches every folder the policy comes from that exists now (and the system folder, so
    /// that `defaults.d` or `locks.d` created later trigger a reload).
    private func watchFolders() {
        guard inotify >= 0 else { return }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
        let folders =
            schemaDirectories + [
                systemDirectory, "\(systemDirectory)/defaults.d", "\(systemDirectory)/locks.d",
            ]
        for folder in folders { _ = inotify_add_watch(inotify, folder, mask) }
    }
}
