import Dispatch
import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the apps' settings folders with inotify and says whose keyfile changed: written and
/// closed, renamed into place (as GLib writes it), or removed. No timer, no polling.
final class KeyfileWatcher: @unchecked Sendable {  // its table is confined to `queue`
    private let fd: Int32
    private var source: (any DispatchSourceRead)?
    /// The app of each watch descriptor.
    private var apps: [Int32: String] = [:]
    private let onChange: @Sendable (Set<String>) -> Void

    /// Starts watching nothing yet; `onChange` runs on `queue` with the apps whose keyfile changed.
    init(queue: DispatchQueue, onChange: @escaping @Sendable (Set<String>) -> Void) throws(SettingsError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw SettingsError(
                .io,
                "cannot watch Flatpak keyfiles: inotify_init1 failed (\(String(cString: strerror(errno))))")
        }
        self.fd = fd
        self.onChange = onChange
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { close(fd) }
        self.source = source
        source.resume()
    }

    /// Watches `folder`, the settings folder of `app`; call on the queue. False when it cannot be.
    @discardableResult
    func watch(_ folder: String, of app: String) -> Bool {
        let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR | IN_DONT_FOLLOW)
        let descriptor = inotify_add_watch(fd, folder, events)
        guard descriptor >= 0 else { return false }
        apps[descriptor] = app
        return true
    }

    /// Stops watching; call on the queue.
    func cancel() {
        source?.cancel()
        source = nil
    }

    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var changed = Set<String>()
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
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    changed.formUnion(apps.values)
                } else if let app = apps[descriptor] {
                    if mask & UInt32(IN_IGNORED) != 0 {
                        apps[descriptor] = nil
                    } else if name == "keyfile" {
                        changed.insert(app)
                    }
                }
            }
        }
        if !changed.isEmpty { onChange(changed) }
    }
}
