import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Which of the two builds of the command line is running.
///
/// `settingsd` is linked statically: with no dynamic loader to run, a command such as
/// `settingsd get` starts in about a millisecond instead of two. A static binary cannot load
/// libpq (glibc would load a second C library beside its own), and a long-running daemon is
/// better position-independent (ASLR), so the commands that run the daemon or reach a hub
/// continue in `settingsd-daemon`, the same command line linked dynamically, installed next to it.
package enum CommandLineBinary: Sendable {
    /// `settingsd`, linked statically.
    case client
    /// `settingsd-daemon`, linked dynamically.
    case daemon

    /// The name of the daemon's binary, next to `settingsd`.
    static let daemonName = "settingsd-daemon"

    /// Replaces this process with `settingsd-daemon` given the same `arguments`; returns only by
    /// throwing, when it cannot be started.
    static func continueInDaemon(_ arguments: [String]) throws(SettingsError) -> Never {
        let path = try daemonPath()
        // The daemon checks that it is this very version (see `checkStartedBySameVersion`).
        setenv(versionVariable, SettingsdVersion.current, 1)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        for argument in argv { free(argument) }
        throw SettingsError(
            .io, "cannot start '\(path)': \(reason) (the daemon and the hub commands run in \(daemonName))",
            path: path)
    }

    /// The variable through which `settingsd` tells `settingsd-daemon` its version.
    static let versionVariable = "SETTINGSD_STARTED_BY_VERSION"

    /// Throws when `settingsd` of another version started this `settingsd-daemon` (a partial
    /// upgrade, or binaries copied from two builds), then forgets the variable.
    static func checkStartedBySameVersion() throws(SettingsError) {
        guard let pointer = getenv(versionVariable) else { return }
        let version = String(cString: pointer)
        unsetenv(versionVariable)
        guard version == SettingsdVersion.current else {
            throw SettingsError(
                .unsupportedVersion,
                "settingsd \(version) started \(daemonName) \(SettingsdVersion.current): install both from one build"
            )
        }
    }

    /// `settingsd-daemon` in the directory of this executable.
    private static func daemonPath() throws(SettingsError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else {
            throw SettingsError(
                .io,
                "cannot find this executable to start \(daemonName) beside it: \(String(cString: strerror(errno)))",
                path: "/proc/self/exe")
        }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = executable.lastIndex(of: "/").map { String(executable[..<$0]) } ?? "."
        return directory + "/" + daemonName
    }
}
