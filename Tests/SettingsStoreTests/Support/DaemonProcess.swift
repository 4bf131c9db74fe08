import Foundation
import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// The built `settingsd` executable, next to the test bundle.
enum SettingsdBinary {
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["SETTINGSD_BINARY"] { return override }
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(
            "settingsd"
        ).path
    }

    /// Copies the executable to `destination` (mode 0755) through a descriptor no child
    /// inherits: `FileManager.copyItem`'s is inherited by any process another test spawns
    /// meanwhile, and while that process lives, running the copy fails with "Text file busy".
    static func copy(to destination: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let descriptor = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Foundation.write(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            guard count > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            written += count
        }
    }
}

/// The outcome of one CLI run.
struct CLIResult {
    let status: Int32
    let output: String
    let error: String
}

/// A real `settingsd run` process on a temporary database and socket, stopped on deinit.
/// Tests write to sockets and pipes whose other end a daemon or a CLI may have closed already (a
/// peer disconnected for a hostile frame, a child that exited before reading its input): that
/// must fail the write, not end the test process with SIGPIPE, which leaves `swift test` waiting
/// for ever on the daemons it orphaned. Evaluated once, by the first daemon or command.
let brokenPipesAreErrors: Void = {
    signal(SIGPIPE, SIG_IGN)
    return ()
}()

final class DaemonProcess {
    let directory: TemporaryDirectory
    let database: String
    let socket: String
    private(set) var process: Process
    private let extraArguments: [String]
    private let environment: [String: String]?
    /// The most descriptors the daemon may open (`prlimit --nofile`), or nil for the test's own.
    private let openFiles: Int?
    /// Where the daemon's log goes (appended), or nil to drop it.
    let logFile: String?

    init(
        _ directory: TemporaryDirectory, database: String? = nil, socket: String? = nil,
        arguments: [String] = [], environment: [String: String]? = nil, openFiles: Int? = nil,
        logFile: String? = nil
    ) throws {
        self.directory = directory
        self.database = database ?? directory.database
        // Socket paths are limited to 107 bytes: keep them short, under /tmp.
        self.socket = socket ?? "/tmp/sdt-\(UUID().uuidString.prefix(12)).sock"
        self.extraArguments = arguments
        self.environment = environment
        self.openFiles = openFiles
        self.logFile = logFile
        self.process = Process()
        brokenPipesAreErrors
        try start()
    }

    deinit {
        Self.stop(process)
        unlink(socket)
    }

    /// Stops `process` if it runs: SIGTERM, then SIGKILL after 10 s. A daemon that does not stop
    /// on SIGTERM fails its own tests; it must not outlive them and hang the run.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Keeps the machine's own schemas and `/etc/settingsd` out of a test unless it names its own.
    private var isolation: [String] {
        var arguments: [String] = []
        if !extraArguments.contains("--schemas") { arguments += ["--schemas", directory.file("no-schemas")] }
        if !extraArguments.contains("--system-dir") {
            arguments += ["--system-dir", directory.file("no-system")]
        }
        return arguments
    }

    /// Starts the daemon and waits until it prints that it is listening.
    func start() throws {
        process = Process()
        let command =
            ["run", "--db", database, "--socket", socket, "--log-level", "warning"] + isolation
            + extraArguments
        if let openFiles {
            // prlimit runs the daemon in its own process (exec), so the process is the daemon.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(openFiles)", SettingsdBinary.path] + command
        } else {
            process.executableURL = URL(fileURLWithPath: SettingsdBinary.path)
            process.arguments = command
        }
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        if let logFile {
            _ = FileManager.default.createFile(atPath: logFile, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
            try handle.seekToEnd()
            process.standardError = handle
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        let line = output.fileHandleForReading.availableData  // blocks until the first line (or exit)
        guard String(decoding: line, as: UTF8.self).contains("listening on") else {
            process.waitUntilExit()
            throw SettingsError(
                .daemonNotRunning, "settingsd did not start (status \(process.terminationStatus))")
        }
    }

    /// SIGKILL, as a crash would.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, and the exit status.
    func terminate() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs the CLI against this daemon.
    func cli(_ arguments: String...) -> CLIResult {
        Self.run(arguments + ["--socket", socket])
    }

    /// A `settingsd watch ARGUMENTS` process on this daemon, its output in a pipe (errors dropped).
    func watcher(_ arguments: String...) throws -> (process: Process, output: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SettingsdBinary.path)
        process.arguments = ["watch"] + arguments + ["--socket", socket]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Runs the CLI against this daemon with `input` on its standard input.
    func cli(_ arguments: String..., input: String) -> CLIResult {
        Self.run(arguments + ["--socket", socket], input: input)
    }

    /// A blocking protocol client.
    func client() throws -> BlockingClient {
        try BlockingClient(socketPath: socket, timeout: 10)
    }

    /// The daemon's `status`.
    func status() throws -> DaemonStatus {
        try client().status()
    }

    /// Runs `settingsd` with `arguments` and waits for it.
    static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
        through executable: String = SettingsdBinary.path
    ) -> CLIResult {
        brokenPipesAreErrors
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        do {
            try process.run()
        } catch {
            return CLIResult(status: -1, output: "", error: "\(error)")
        }
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inputPipe.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }
}
