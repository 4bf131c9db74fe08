import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Spawning commands with posix_spawn (no Foundation overhead in the measurement).
enum ChildProcess {
    /// Runs `arguments` (the first is the program path) with output discarded; returns the exit status.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input { posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, arguments[0], &actions, nil, &cArguments, environ) == 0 else { return -1 }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status
    }

    /// Whole-process wall times of `arguments`, in seconds, over `count` runs.
    static func wallTimes(_ arguments: [String], count: Int) -> [Double] {
        (0..<count).map { _ in measureSeconds { run(arguments) } }
    }

    /// The full path of `name` on $PATH, if installed.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}

/// A `settingsd run` child on a scratch database and socket.
final class BenchDaemon {
    let process = Process()
    let socket: String

    init(
        binary: String, scratch: Scratch, name: String = "daemon", arguments: [String] = [],
        environment: [String: String]? = nil, hub: String? = nil
    ) throws {
        socket = "/tmp/sdb-\(UUID().uuidString.prefix(8)).sock"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            ["run", "--db", scratch.file("\(name).sqlite"), "--socket", socket, "--log-level", "error"]
            + arguments
        if let environment { process.environment = environment }
        // The hub's URL carries a password: through the environment, not the arguments (which
        // every user can read, and `settingsd` warns of).
        if let hub {
            process.environment = (environment ?? ProcessInfo.processInfo.environment)
                .merging(["SETTINGSD_HUB": hub]) { $1 }
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        guard String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).contains("listening")
        else {
            throw CocoaError(.executableLoad)
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }

    /// The daemon's resident memory now, in MiB.
    var residentMiB: Double { residentMemoryMiB(of: process.processIdentifier) }
}

/// A blocking client handed to the one thread that alone uses it.
struct UncheckedClient: @unchecked Sendable {  // used by exactly one thread
    let client: BlockingClient
    init(_ client: BlockingClient) { self.client = client }
}

/// A Redis connection handed to the one thread that uses it.
struct UncheckedRedis: @unchecked Sendable {  // used by exactly one thread
    let connection: RedisPeer.Connection
    init(_ connection: RedisPeer.Connection) { self.connection = connection }
}
