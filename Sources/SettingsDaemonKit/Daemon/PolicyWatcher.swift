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
/// SIGHUP, or any change in their folders (inotify). A folder that does not exist yet is waited
/// for at its nearest existing parent: creating it (`mkdir -p ~/.local/share/settingsd/schemas`)
/// and then a file in it reloads, with no restart and no signal.
///
/// Unchecked Sendable: `watches` and the inotify source and descriptor are used only on
/// `queue`; everything else is set in `init` and never changes.
final class PolicyWatcher: @unchecked Sendable {  // `watches` and the source live on `queue`
    let schemaDirectories: [String]
    let systemDirectory: String
    let isStrict: Bool
    /// What the policy is read with besides settingsd's own files (GSettings, Flatpak apps).
    let extensions: SchemaExtensions
    private let settings: Settings
    private let logger: SettingsLogger
    private let queue = DispatchQueue(label: "settingsd.policy")
    private let source: (any DispatchSourceRead)?
    private let inotify: Int32
    /// Per inotify watch: nil for a policy folder itself (any change counts), else the names of
    /// the missing folders it is a parent of (only their creation counts).
    private var watches: [Int32: Set<String>?] = [:]

    init(
        schemaDirectories: [String], systemDirectory: String, isStrict: Bool, extensions: SchemaExtensions,
        settings: Settings, logger: SettingsLogger
    ) {
        self.schemaDirectories = schemaDirectories
        self.systemDirectory = systemDirectory
        self.isStrict = isStrict
        self.extensions = extensions
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
        queue.sync { _ = watchFolders() }
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
                    isStrict: isStrict, extensions: extensions)
                // Folders created since are watched from now on; one that just became watched may
                // have had files written before its watch: read it again once more.
                if watchFolders() {
                    queue.asyncAfter(deadline: .now() + 0.1) { [weak self] in
                        self?.reload(because: "a folder appeared")
                    }
                }
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
        var matters = false
        while true {
            let count = read(inotify, &buffer, buffer.count)
            guard count > 0 else { break }
            matters =
                matters
                || InotifyEvents(buffer[..<count]).contains { event in
                    guard let awaited = watches[event.watch] else { return false }
                    // A policy folder's own change, or the creation of a folder on the way to one.
                    return awaited.map { $0.contains(event.name) } ?? true
                }
        }
        guard matters else { return }
        queue.asyncAfter(deadline: .now() + 0.1) { [weak self] in self?.reload(because: "a file changed") }
    }

    /// Watches every folder the policy comes from that exists now (and the system folder, so
    /// that `defaults.d` or `locks.d` created later trigger a reload), and the nearest existing
    /// parent of each that does not; returns whether a policy folder became watched.
    private func watchFolders() -> Bool {
        guard inotify >= 0 else { return false }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
        let folders =
            schemaDirectories + [
                systemDirectory, "\(systemDirectory)/defaults.d", "\(systemDirectory)/locks.d",
            ]
        var appeared = false
        var parents: [Int32: Set<String>] = [:]
        for folder in folders {
            let watch = inotify_add_watch(inotify, folder, mask)
            if watch >= 0 {
                if watches[watch] == nil { appeared = true }
                watches[watch] = .some(nil)
                continue
            }
            // Missing: wait at the nearest parent that exists for the next folder on the way.
            var child = folder
            var parent = FileSystem.parent(of: folder)
            while parent != child {
                let watch = inotify_add_watch(inotify, parent, UInt32(IN_CREATE | IN_MOVED_TO))
                if watch >= 0 {
                    parents[watch, default: []].insert(String(child.split(separator: "/").last ?? ""))
                    break
                }
                (child, parent) = (parent, FileSystem.parent(of: parent))
            }
        }
        for (watch, names) in parents {
            switch watches[watch] {
            case .some(.none): continue  // a policy folder itself: every change counts already
            case .some(.some(let known)): watches[watch] = .some(known.union(names))
            case .none: watches[watch] = .some(names)
            }
        }
        return appeared
    }
}
