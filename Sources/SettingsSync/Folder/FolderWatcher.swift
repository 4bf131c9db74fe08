import Dispatch
import SettingsStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches a synced folder and its replicas' folders with inotify, and says which changed: no
/// timer and no polling, so an idle folder costs no wake-ups. A file is seen when it is
/// complete under its name (closed after writing, or renamed into place, as syncers do).
///
/// Unchecked Sendable: the watch table is confined to `queue`; the descriptor is set once.
final class FolderWatcher: @unchecked Sendable {  // state on its serial queue only
    /// What changed: a replica's folder (its name), or everything (the kernel's queue overflowed,
    /// or the folder itself went away).
    enum Change: Equatable {
        case replica(String)
        case everything
    }

    private let fd: Int32
    private let root: String
    private let queue: DispatchQueue
    private var source: (any DispatchSourceRead)?
    /// Watch descriptors of replica folders, by descriptor.
    private var replicas: [Int32: String] = [:]
    private var rootWatch: Int32 = -1
    private let onChange: @Sendable ([Change]) -> Void

    /// What a replica folder's watch reports: files closed after writing, moved in or out, removed.
    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
    /// What the folder's own watch reports: replica folders made or moved in, and its own end.
    private static let rootEvents = UInt32(
        IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Starts watching `root`; `onChange` runs on `queue` with what changed.
    init(root: String, queue: DispatchQueue, onChange: @escaping @Sendable ([Change]) -> Void)
        throws(SettingsError)
    {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw SettingsError(
                .io,
                "cannot watch the folder '\(root)': inotify_init1 failed (\(String(cString: strerror(errno))))",
                path: root)
        }
        self.fd = fd
        self.root = root
        self.queue = queue
        self.onChange = onChange
        rootWatch = inotify_add_watch(fd, root, Self.rootEvents)
        guard rootWatch >= 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SettingsError(.io, "cannot watch the folder '\(root)': \(reason)", path: root)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { close(fd) }
        self.source = source
        source.resume()
    }

    /// Stops watching; call on `queue`.
    func cancel() {
        source?.cancel()
        source = nil
    }

    /// Watches the replica folder `name` inside the root (again: a watch on a folder that was
    /// replaced is renewed); call on `queue`. False when it cannot be watched (the kernel's
    /// limit of watches, or it is gone).
    @discardableResult
    func watch(replica name: String) -> Bool {
        let descriptor = inotify_add_watch(fd, root + "/" + name, Self.fileEvents | UInt32(IN_ONLYDIR))
        guard descriptor >= 0 else { return false }
        replicas[descriptor] = name
        return true
    }

    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var changes: [Change] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            // struct inotify_event: int wd; uint32_t mask, cookie, len; char name[len].
            while offset + 16 <= count {
                let (descriptor, mask, length) = buffer.withUnsafeBytes { bytes in
                    (
                        bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0
                    || (descriptor == rootWatch
                        && mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0)
                {
                    changes.append(.everything)
                } else if descriptor == rootWatch {
                    if !name.isEmpty { changes.append(.replica(name)) }
                } else if let replica = replicas[descriptor] {
                    if mask & UInt32(IN_IGNORED) != 0 {
                        replicas[descriptor] = nil
                    } else {
                        changes.append(.replica(replica))
                    }
                }
            }
        }
        guard !changes.isEmpty else { return }
        var unique: [Change] = []
        for change in changes where !unique.contains(change) { unique.append(change) }
        onChange(unique)
    }
}
