import Foundation

@testable import SettingsStore

/// A private tmux server with one window running a plain shell (prompt `$ `): the real terminal
/// the browser's tests type into (`send-keys`) and read (`capture-pane`). Its socket is in the
/// test's own folder, so tests in parallel never share a server; it is killed on release.
final class TmuxTerminal {
    let socket: String

    /// Starts the server with a `columns` × `rows` window; `environment` is set in the shell.
    init(
        _ directory: TemporaryDirectory, columns: Int = 80, rows: Int = 24,
        environment: [String: String] = [:]
    )
        throws
    {
        socket = directory.file("tmux.sock")
        var shellEnvironment = [
            "PS1": "$ ", "TERM": "tmux-256color", "LANG": "C.UTF-8", "HOME": directory.path,
        ]
        shellEnvironment.merge(environment) { $1 }
        let assignments = shellEnvironment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let shell =
            (["env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin"] + assignments.map(Self.quoted)
            + ["bash", "--norc", "--noprofile"]).joined(separator: " ")
        // The server this starts outlives the command and closes what it inherits: started through
        // `posix_spawn` (SpawnedProcess), as Foundation's `Process` would wait on it for ever and
        // notice no other child's exit meanwhile. The status line goes in the same command: a
        // later `set-option` through `Process` would start a server again if this one had ended.
        var environment = ProcessInfo.processInfo.environment
        environment["TMUX"] = nil
        let starter = try SpawnedProcess(
            [
                "/usr/bin/tmux", "-u", "-f", "/dev/null", "-S", socket, "new-session", "-d", "-x",
                "\(columns)", "-y",
                "\(rows)", shell, ";", "set-option", "-g", "status", "off",
            ], environment: environment)
        let started = Date().addingTimeInterval(15)
        while starter.isRunning {
            guard Date() < started else { throw SettingsError(.timeout, "tmux new-session did not return") }
            usleep(5_000)
        }
        // The prompt, `$ ` (a capture drops trailing spaces).
        try awaitScreenSync { $0.hasPrefix("$") }
    }

    deinit {
        _ = try? run(["kill-server"])
    }

    /// Runs `tmux -S socket arguments` and returns what it printed.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = ["-u", "-f", "/dev/null", "-S", socket] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TMUX"] = nil
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SettingsError(
                .io, "tmux \(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Sends tmux key names (`Enter`, `Escape`, `C-c`, `Up`) or single characters.
    func press(_ keys: String...) throws {
        try run(["send-keys", "-t", "0"] + keys)
    }

    /// Types `text` literally.
    func type(_ text: String) throws {
        try run(["send-keys", "-t", "0", "-l", text])
    }

    /// Types `command` and Enter at the shell.
    func runCommand(_ command: String) throws {
        try type(command)
        try press("Enter")
    }

    /// The screen as text, one line per row, trailing spaces removed.
    func screen() throws -> String {
        try run(["capture-pane", "-p", "-t", "0"])
    }

    /// The screen with its attributes as escape sequences.
    func screenWithAttributes() throws -> String {
        try run(["capture-pane", "-p", "-e", "-t", "0"])
    }

    /// A tmux format of the pane (`#{alternate_on}`, `#{cursor_flag}`, `#{pane_pid}`).
    func pane(_ format: String) throws -> String {
        try run(["display-message", "-p", "-t", "0", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Resizes the window.
    func resize(columns: Int, rows: Int) throws {
        try run(["resize-window", "-t", "0", "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Waits until the screen meets `condition` and returns it; fails with the screen after 15 s.
    @discardableResult
    func awaitScreen(
        fileID: StaticString = #fileID, line: UInt = #line, _ condition: (String) -> Bool
    ) async throws -> String {
        let deadline = Date().addingTimeInterval(15)
        while true {
            let screen = try screen()
            if condition(screen) { return screen }
            guard Date() < deadline else {
                throw SettingsError(
                    .timeout, "screen at \(fileID):\(line) never matched; it shows:\n\(screen)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the screen shows `text`.
    @discardableResult
    func awaitText(_ text: String, fileID: StaticString = #fileID, line: UInt = #line) async throws -> String
    {
        try await awaitScreen(fileID: fileID, line: line) { $0.contains(text) }
    }

    private func awaitScreenSync(_ condition: (String) -> Bool) throws {
        let deadline = Date().addingTimeInterval(15)
        while try !condition(screen()) {
            guard Date() < deadline else {
                throw SettingsError(
                    .timeout, "the shell in tmux never started; the screen shows:\n\(try screen())")
            }
            usleep(10_000)
        }
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
