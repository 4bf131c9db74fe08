import Foundation

/// A real user account for a test (the tests run as root in CI): made with `useradd`, removed
/// with `userdel` when released, so a test acts as another local user with an entry in
/// `/etc/passwd`, as an attacker on the machine would be.
final class SystemUser {
    let name: String
    let uid: Int
    let gid: Int

    /// Whether users can be made and acted as here.
    static let isAvailable =
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    init() throws {
        name = "sdt\(UUID().uuidString.prefix(8).lowercased())"
        let made = DaemonProcess.run(
            ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name],
            through: "/usr/sbin/useradd")
        guard made.status == 0, let entry = getpwnam(name) else {
            throw SettingsTestError("useradd \(name) failed: \(made.error)")
        }
        uid = Int(entry.pointee.pw_uid)
        gid = Int(entry.pointee.pw_gid)
    }

    deinit {
        _ = DaemonProcess.run(["--force", name], through: "/usr/sbin/userdel")
    }

    /// Runs `executable` with `arguments` as this user, with `environment` if given.
    func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) -> CLIResult {
        DaemonProcess.run(
            ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", executable] + arguments,
            environment: environment, through: "/usr/bin/setpriv")
    }

    /// Starts `executable` with `arguments` as this user, its output dropped.
    func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> Process
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", executable] + arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}

extension Process {
    /// Ends the process with `SIGKILL` and waits for it. A child started from a Dispatch worker
    /// inherits that thread's blocked signal mask, so a `SIGTERM` may stay pending forever in a
    /// program that does not unblock it (Python does not).
    func kill() {
        guard isRunning else { return }
        _ = Glibc.kill(processIdentifier, SIGKILL)
        waitUntilExit()
    }
}

/// A failure of a test's own set-up, with what went wrong.
struct SettingsTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
