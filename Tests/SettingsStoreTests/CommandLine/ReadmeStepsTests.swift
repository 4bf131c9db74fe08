import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore

extension Reliability {
    /// The README's steps for GNOME users and administrators, run as a new user would type them:
    /// a home folder of their own, no `XDG_DATA_HOME`, the daemon on its default paths.
    @Suite("README steps: what the README tells a new user to type does what it says")
    struct ReadmeStepsTests {
        /// The lines of the first `sh` block after the paragraph that starts with `lead`, in the
        /// README or the guide (`docs/guides/NAME`) that holds it.
        static func block(after lead: String, in guide: String = "README.md") throws -> [String] {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            let path = guide == "README.md" ? guide : "docs/guides/\(guide)"
            let readme = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let lines = readme.components(separatedBy: "\n")
            let start = try #require(lines.firstIndex { $0.hasPrefix(lead) }, "no paragraph '\(lead)'")
            let open = try #require(lines[start...].firstIndex(of: "```sh"))
            let close = try #require(lines[(open + 1)...].firstIndex(of: "```"))
            return Array(lines[(open + 1)..<close])
        }

        /// A new user's environment: their own home, a private runtime folder, `settingsd` on the path.
        static func newUser(in directory: TemporaryDirectory) throws -> [String: String] {
            let home = directory.file("home")
            let runtime = directory.file("run")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let binaries = URL(fileURLWithPath: SettingsdBinary.path).deletingLastPathComponent().path
            return [
                "HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "\(binaries):/usr/bin:/bin",
                "LANG": "C.UTF-8",
            ]
        }

        /// Runs `line` with bash in `environment`.
        static func shell(_ line: String, _ environment: [String: String]) -> CLIResult {
            DaemonProcess.run(["-e", "-c", line], environment: environment, through: "/bin/bash")
        }

        /// `settingsd run` as the README starts it, in `environment`, on its default paths.
        static func daemon(_ environment: [String: String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: SettingsdBinary.path)
            process.arguments = ["run"]
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = output.fileHandleForReading.availableData
            #expect(String(decoding: line, as: UTF8.self).contains("listening on"))
            return process
        }

        @Test(
            "'Choose what stays on this machine': the schema file made while the daemon runs takes effect at once"
        )
        func chooseWhatStays() async throws {
            let directory = TemporaryDirectory()
            let environment = try Self.newUser(in: directory)
            let daemon = try Self.daemon(environment)
            defer { DaemonProcess.stop(daemon) }
            let step = try Self.block(after: "and override any of it in your own schema file", in: "gnome.md")
                .joined(
                    separator: "\n")
            let ran = Self.shell(step, environment)
            #expect(ran.status == 0, "\(ran.error)")
            try await waitUntil(timeout: 10) {
                Self.shell("settingsd describe org.gnome.shell.favorite-apps", environment).output.contains(
                    "scope: local")
            }
        }

        @Test(
            "Getting started's command-line block runs line by line for a new user and prints what its comments say"
        )
        func gettingStartedCommandLine() async throws {
            let directory = TemporaryDirectory()
            let environment = try Self.newUser(in: directory)
            let daemon = try Self.daemon(environment)
            defer { DaemonProcess.stop(daemon) }
            var ran = 0
            for line in try Self.block(after: "In a second terminal", in: "getting-started.md") {
                let command =
                    line.components(separatedBy: "  #").first?.trimmingCharacters(in: .whitespaces) ?? ""
                guard !command.isEmpty else { continue }
                // In the home folder, where `export backup.json` writes.
                let inHome = "cd \"$HOME\"; "
                if command.hasPrefix("settingsd watch ") {
                    // Its comment's example line, printed once the watch hears a change (changed
                    // again until it does: the watch may not be registered at the first, and a
                    // write of the value a key holds already changes nothing).
                    let watched = Self.shell(
                        inHome + "\(command) > watch.out & for try in $(seq 200); do "
                            + "settingsd set audio.volume 0.85; settingsd set audio.volume 0.9; "
                            + "grep -q 'audio.volume = 0.9' watch.out && break; sleep 0.05; "
                            + "done; kill %1; cat watch.out",
                        environment)
                    #expect(watched.output.contains("local audio.volume = 0.9"), "\(watched.output)")
                } else if command == "settingsd browse" {
                    // Without a terminal it says so; in one, BrowserTerminalTests drive it.
                    let browse = Self.shell(inHome + command, environment)
                    #expect(
                        browse.status == 1 && browse.error.contains("needs a terminal"), "\(browse.error)")
                } else {
                    let result = Self.shell(inHome + command, environment)
                    #expect(result.status == 0, "\(command): \(result.error)")
                    if command == "settingsd get audio.volume" { #expect(result.output == "0.8\n") }
                    if command == "settingsd list audio." {
                        #expect(result.output.contains("audio.volume = 0.8"))
                    }
                    if command.hasPrefix("settingsd help set") {
                        #expect(result.output.hasPrefix("OVERVIEW:"))
                    }
                }
                ran += 1
            }
            #expect(ran >= 10, "the block has its commands")
        }

        @Test(
            "'Trying it without root': defaults and locks in a folder of one's own reach the daemon started with it"
        )
        func tryingWithoutRoot() async throws {
            let directory = TemporaryDirectory()
            var environment = try Self.newUser(in: directory)
            var daemon: Process?
            defer { daemon.map(DaemonProcess.stop) }
            for line in try Self.block(after: "**Trying it without root**", in: "administrators.md") {
                let command =
                    line.components(separatedBy: "  #").first?.trimmingCharacters(in: .whitespaces) ?? ""
                let expectation = line.components(separatedBy: "# ").dropFirst().joined(separator: "# ")
                if command.hasPrefix("export ") {
                    let assignment = command.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
                    environment[String(assignment[0])] = String(assignment[1])
                        .replacingOccurrences(of: "~", with: environment["HOME"] ?? "")
                } else if command == "settingsd run &" {
                    daemon = try Self.daemon(environment)
                } else if expectation.hasPrefix("Error: ") {
                    // The daemon reloads on its own a moment after the file is written.
                    try await waitUntil(timeout: 10) {
                        let result = Self.shell(command, environment)
                        return result.status != 0 && result.error.contains("locked by")
                    }
                } else if expectation.hasPrefix("dark / from: ") {
                    try await waitUntil(timeout: 10) {
                        let output = Self.shell(command, environment).output
                        return output.contains("dark") && output.contains("try-etc/defaults.d/10-site.json")
                    }
                } else {
                    let result = Self.shell(command, environment)
                    #expect(result.status == 0, "\(command): \(result.error)")
                }
            }
            #expect(daemon != nil, "the block starts the daemon")
        }
    }
}
