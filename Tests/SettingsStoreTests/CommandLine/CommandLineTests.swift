import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A program the tests run, when the machine has it.
private func installed(_ program: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/\(program)")
}

/// Runs `program` with `arguments` (through `/usr/bin/env`, with the built settingsd first on PATH).
private func shell(_ program: String, _ arguments: [String]) throws -> CLIResult {
    var environment = ProcessInfo.processInfo.environment
    let folder = URL(fileURLWithPath: SettingsdBinary.path).deletingLastPathComponent().path
    environment["PATH"] = folder + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    environment["XDG_CONFIG_HOME"] = NSTemporaryDirectory()  // fish writes its own config on first run
    return DaemonProcess.run([program] + arguments, environment: environment, through: "/usr/bin/env")
}

extension Reliability {
    /// The command line is declared once; help, usage, completions and the man page come from the
    /// declaration and must stay what users see.
    @Suite("The command line: help, completions and the man page from one declaration")
    struct CommandLineTests {
        let directory = TemporaryDirectory()

        static let helpFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Help")

        /// The commands `settingsd help` lists.
        static func commands() -> [String] {
            let lines = DaemonProcess.run(["__complete", "1", "settingsd", ""]).output.split(separator: "\n")
            return lines.dropFirst().map(String.init).filter { !$0.hasPrefix("-") }
        }

        @Test("docs/guides/cli.md is what scripts/cli-reference makes of the commands' declarations")
        func cliReference() throws {
            let root = Self.helpFolder.deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            let made = DaemonProcess.run(
                [root.appendingPathComponent("scripts/cli-reference").path, SettingsdBinary.path],
                through: "/bin/bash")
            #expect(made.status == 0, "\(made.error)")
            let kept = try String(
                contentsOf: root.appendingPathComponent("docs/guides/cli.md"), encoding: .utf8)
            #expect(
                made.output == kept,
                "docs/guides/cli.md is stale: scripts/cli-reference .build/debug/settingsd > docs/guides/cli.md"
            )
        }

        @Test("every help text is verbatim what Help/*.txt holds, through 'help', '-h' and '--help'")
        func helpTexts() throws {
            let commands = Self.commands()
            #expect(commands.count >= 18, "\(commands)")
            let general = try String(
                contentsOf: Self.helpFolder.appendingPathComponent("settingsd.txt"), encoding: .utf8)
            #expect(DaemonProcess.run(["help"]).output == general)
            #expect(DaemonProcess.run(["--help"]).output == general)
            for command in commands {
                let expected = try String(
                    contentsOf: Self.helpFolder.appendingPathComponent("\(command).txt"), encoding: .utf8)
                for form in [["help", command], [command, "--help"], [command, "-h"]] {
                    let result = DaemonProcess.run(form)
                    #expect(result.status == 0, "\(form)")
                    #expect(result.output == expected, "\(form) differs from Help/\(command).txt")
                }
            }
            // Help wins over everything else on the line, even an option's value.
            let delete = try String(
                contentsOf: Self.helpFolder.appendingPathComponent("delete.txt"), encoding: .utf8)
            #expect(DaemonProcess.run(["delete", "--socket=/nowhere", "--help"]).output == delete)
            let files = try FileManager.default.contentsOfDirectory(atPath: Self.helpFolder.path)
            #expect(Set(files) == Set(commands.map { "\($0).txt" } + ["settingsd.txt"]), "stale help files")
        }

        @Test("every option of every command shows in its usage line and its help")
        func usageNamesEveryOption() {
            for command in Self.commands() {
                let help = DaemonProcess.run(["help", command]).output
                let usage = help.split(separator: "\n\n")[1]
                let options = DaemonProcess.run(["__complete", "2", "settingsd", command, "--"]).output
                    .split(separator: "\n").dropFirst().filter { $0 != "--help" }
                for option in options {
                    #expect(usage.contains("[\(option)"), "\(command)'s usage lacks \(option)")
                    #expect(help.contains("  \(option)"), "\(command)'s help lacks \(option)")
                }
            }
        }

        @Test("values outside an option's range are usage errors naming the option and the range")
        func optionRanges() {
            let cases: [([String], String)] = [
                (["run", "--max-frame", "99999999999999"], "--max-frame needs a byte count from"),
                (
                    ["run", "--idle-timeout", "99999999999999999999"],
                    "--idle-timeout needs a number of seconds"
                ),
                (["run", "--idle-timeout", "nan"], "--idle-timeout needs"),
                (["run", "--durability", "fast"], "--durability needs normal or full, not 'fast'"),
                (["run", "--allow-uid", "-1"], "--allow-uid needs a numeric user id"),
                (["history", "--limit", "0"], "--limit needs a number of changes from 1 to 100000"),
                (["history", "--since", "yesterday"], "--since needs a time in ISO 8601"),
                (["sync", "--wait", "--timeout", "-1"], "--timeout needs"),
                (["set", "k", "v", "--type", "float"], "--type needs bool, int"),
                (["list", "--keys", "--json"], "--keys prints names only"),
                (["help", "get", "--man"], "--man prints the whole manual"),
            ]
            for (arguments, message) in cases {
                let result = DaemonProcess.run(arguments)
                #expect(result.status == 64, "\(arguments): \(result.status)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
            }
        }

        @Test(
            "get --explain --json prints one JSON object of value and source (it printed a non-JSON line too)"
        )
        func explainAsJSON() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "k", "v").status == 0)
            let output = daemon.cli("get", "k", "--explain", "--json").output
            #expect(output.split(separator: "\n").count == 1, "\(output)")
            let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String]
            #expect(object == ["value": "v", "source": "the user's value"], "\(output)")
        }

        @Test("the completion engine offers commands, options, option values, arguments and files")
        func completionEngine() {
            func complete(_ words: String...) -> [String] {
                let index = String(words.count - 1)
                return DaemonProcess.run(["__complete", index, "settingsd"] + words.dropFirst())
                    .output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
                        String.init)
            }
            #expect(complete("settingsd", "ge") == ["words", "get"])
            #expect(complete("settingsd", "run", "--dur") == ["words", "--durability"])
            #expect(complete("settingsd", "run", "--durability", "") == ["words", "normal", "full"])
            #expect(complete("settingsd", "run", "--log-level", "w") == ["words", "warning"])
            #expect(complete("settingsd", "run", "--schemas", "") == ["directories"])
            #expect(complete("settingsd", "import", "") == ["files"])
            #expect(complete("settingsd", "schema", "") == ["words", "check", "swift", "import-dconf-db"])
            #expect(complete("settingsd", "schema", "check", "") == ["files"])
            #expect(complete("settingsd", "help", "sta") == ["words", "status"])
            #expect(complete("settingsd", "completions", "") == ["words", "bash", "zsh", "fish"])
            // An option's value is not an argument: FILE is still the first one.
            #expect(complete("settingsd", "import", "--db", "x.sqlite", "") == ["files"])
            #expect(complete("settingsd", "nonsense", "") == ["words"])
            #expect(complete("settingsd", "set", "k", "v", "") == ["words"])
        }

        @Test("key names complete from the daemon the line names, through bash")
        func keysFromTheDaemon() throws {
            let daemon = try DaemonProcess(directory)
            for key in ["ui.theme", "ui.font.size", "audio.volume"] {
                #expect(daemon.cli("set", key, "1").status == 0)
            }
            let script = DaemonProcess.run(["completions", "bash"]).output
            let file = directory.file("settingsd.bash")
            try script.write(toFile: file, atomically: true, encoding: .utf8)
            let probe = """
                source '\(file)'
                COMP_WORDS=(settingsd get --socket '\(daemon.socket)' ui.); COMP_CWORD=4; _settingsd
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try shell("bash", ["-c", probe])
            #expect(result.output == "ui.font.size\nui.theme\n", "\(result.output) \(result.error)")
        }

        @Test("the bash script loads and completes a command and an option")
        func bash() throws {
            let file = directory.file("settingsd.bash")
            try DaemonProcess.run(["completions", "bash"]).output.write(
                toFile: file, atomically: true, encoding: .utf8)
            #expect(try shell("bash", ["-n", file]).status == 0)
            let probe = """
                source '\(file)'
                COMP_WORDS=(settingsd hist); COMP_CWORD=1; _settingsd; printf '%s\\n' "${COMPREPLY[@]}"
                COMP_WORDS=(settingsd list --pre); COMP_CWORD=2; _settingsd; printf '%s\\n' "${COMPREPLY[@]}"
                """
            #expect(try shell("bash", ["-c", probe]).output == "history\n--pretty\n")
        }

        @Test("the zsh script loads and completes a command and an option", .enabled(if: installed("zsh")))
        func zsh() throws {
            let file = directory.file("_settingsd")
            try DaemonProcess.run(["completions", "zsh"]).output.write(
                toFile: file, atomically: true, encoding: .utf8)
            #expect(try shell("zsh", ["-n", file]).status == 0)
            // compadd is the completion system's builtin; outside a completion widget it is
            // replaced by one that prints what it was given.
            let probe = """
                source '\(file)'
                compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; shift; print -l -- "$@" }
                words=(settingsd hist); CURRENT=2; _settingsd
                words=(settingsd list --pre); CURRENT=3; _settingsd
                """
            let result = try shell("zsh", ["-c", probe])
            #expect(result.output == "history\n--pretty\n", "\(result.output) \(result.error)")
        }

        @Test("the fish script loads and completes a command and an option", .enabled(if: installed("fish")))
        func fish() throws {
            let file = directory.file("settingsd.fish")
            try DaemonProcess.run(["completions", "fish"]).output.write(
                toFile: file, atomically: true, encoding: .utf8)
            #expect(try shell("fish", ["-n", file]).status == 0)
            let probe = "source '\(file)'; complete -C 'settingsd hist'; complete -C 'settingsd list --pre'"
            let result = try shell("fish", ["-c", probe])
            #expect(result.output == "history\n--pretty\n", "\(result.output) \(result.error)")
        }

        @Test(
            "the man page has every command and option and renders without a warning",
            .enabled(if: installed("man")))
        func manPage() throws {
            let page = DaemonProcess.run(["help", "--man"])
            #expect(page.status == 0)
            let file = directory.file("settingsd.1")
            try page.output.write(toFile: file, atomically: true, encoding: .utf8)
            let rendered = try shell("man", ["--warnings", "-E", "UTF-8", "-l", file])
            #expect(rendered.status == 0)
            #expect(rendered.error.isEmpty, "\(rendered.error)")
            let text = rendered.output.replacingOccurrences(of: "\u{2010}\n", with: "")
            for command in Self.commands() { #expect(text.contains("settingsd \(command)"), "\(command)") }
            for option in ["--max-frame", "--history-keep", "--strict-schemas", "--keys", "--man"] {
                #expect(page.output.contains(option.replacingOccurrences(of: "-", with: "\\-")), "\(option)")
            }
            // The check can fail: a page with an unknown request is reported.
            try (page.output + "\n.XX broken\n").write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try !shell("man", ["--warnings", "-E", "UTF-8", "-l", file]).error.isEmpty)
        }
    }
}
