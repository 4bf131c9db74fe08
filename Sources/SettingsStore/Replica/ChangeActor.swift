#if canImport(Glibc)
    import Glibc
#endif

/// Who made a change, as the history records it: a process, by user id, pid and executable.
public struct ChangeActor: Sendable, Equatable {
    /// The user id.
    public var uid: UInt32
    /// The process id.
    public var pid: Int32
    /// The executable's path (`/proc/PID/exe`), when it could be read.
    public var executable: String?

    /// Creates an actor.
    package init(uid: UInt32, pid: Int32, executable: String?) {
        self.uid = uid
        self.pid = pid
        self.executable = executable
    }

    /// This process.
    /// A change found in dconf (`gsettings set`, dconf-editor, GNOME itself) and brought in by
    /// the daemon's bridge: dconf does not say which process wrote it.
    package static let dconf = ChangeActor(uid: getuid(), pid: 0, executable: "dconf")

    package static let current = ChangeActor(
        uid: getuid(), pid: getpid(), executable: executable(of: getpid()))

    /// The executable of process `pid`, read from `/proc` (nil when it is gone or not ours to read).
    package static func executable(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
