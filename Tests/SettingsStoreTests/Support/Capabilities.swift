import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What this machine lets the tests do, probed once, so a test that needs more is reported as
/// skipped instead of passing without checking anything.
enum Capabilities {
    /// Whether this process may mount a small tmpfs (root with CAP_SYS_ADMIN, outside a
    /// container that forbids it).
    static let canMountTmpfs: Bool = {
        let mountPoint = NSTemporaryDirectory() + "settingsd-mount-probe-\(UUID().uuidString)"
        guard
            (try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true))
                != nil
        else { return false }
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        guard mount("tmpfs", mountPoint, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount(mountPoint)
        return true
    }()
}
