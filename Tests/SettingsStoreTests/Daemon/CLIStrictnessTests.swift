import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("The CLI: strict arguments and output people can read")
    struct CLIStrictnessTests {
        let directory = TemporaryDirectory()

        @Test(
            "a key argument that can name no key is a usage error (exit 64) on every command, before any daemon is asked"
        )
        func invalidKeyArguments() {
            let socket = "/tmp/sdt-none-\(UUID().uuidString.prefix(8)).sock"
            for key in ["", "bad\u{1}key", "tab\tkey"] {
                for command in [
                    ["get", key], ["set", key, "1"], ["delete", key], ["describe", key],
                    ["reset", key], ["history", key], ["revert", key, "--before", "2026-01-01"],
                ] {
                    let result = DaemonProcess.run(command + ["--socket", socket])
                    #expect(result.status == 64, "\(command): \(result.error)")
                    #expect(result.error.contains("invalid key"), "\(command): \(result.error)")
                }
            }
        }

        @Test(
            "a hub option given to an action that does not take it is a usage error, not ignored; so is a policy without its file or a report of two policies"
        )
        func hubOptionsBelongToTheirAction() {
            for (arguments, reason) in [
                (["hub", "status", "host=/x", "--poll-rate", "5"], "--poll-rate is not for hub status"),
                (["hub", "init", "host=/x", "--target", "staff"], "--target is not for hub init"),
                (["hub", "policy", "list", "host=/x", "--dry-run"], "--dry-run is not for hub policy list"),
                (["hub", "report", "host=/x", "--target", "staff"], "--target is not for hub report"),
                (
                    ["hub", "policy", "show", "host=/x", "p", "--unseen-after", "1d"],
                    "--unseen-after is not for hub policy show"
                ),
                (["hub", "policy", "set", "host=/x", "p"], "usage: settingsd hub policy set"),
                (["hub", "report", "host=/x", "a", "b"], "usage: settingsd hub report"),
                (["hub", "policy", "rename", "host=/x"], "hub policy has no action 'rename'"),
                (["hub", "report", "host=/x", "--unseen-after", "soon"], "--unseen-after"),
            ] {
                let result = DaemonProcess.run(arguments)
                #expect(result.status == 64, "\(arguments): \(result.error)")
                #expect(result.error.contains(reason), "\(arguments): \(result.error)")
            }
        }

        @Test("run with a hub URL that does not parse fails before it creates the database")
        func unusableHubURLCreatesNothing() {
            let database = directory.file("never.sqlite")
            let socket = "/tmp/sdt-hub-\(UUID().uuidString.prefix(8)).sock"
            let result = DaemonProcess.run([
                "run", "--db", database, "--socket", socket, "--hub",
                "postgresql://alice@db.example.org/settings?sslmode=%zz",
                "--schemas", directory.file("none"), "--system-dir", directory.file("none"),
            ])
            #expect(result.status != 0)
            #expect(!FileManager.default.fileExists(atPath: database), "\(result.error)")
            #expect(!result.error.isEmpty)
        }

        @Test("a key typed 'any' by its schema takes a plain string from set, as an undeclared key does")
        func anyTypedKeyTakesStrings() throws {
            let daemon = try DaemonProcess(directory, arguments: ["--schemas", exampleSchemaDirectory])
            let set = daemon.cli("set", "window.main", "not json at all")
            #expect(set.status == 0, "\(set.error)")
            #expect(daemon.cli("get", "window.main", "--json").output == "\"not json at all\"\n")
            #expect(daemon.cli("set", "window.sizes", "[1, 2]", "--json").status == 0)
            #expect(daemon.cli("get", "window.sizes", "--json").output == "[1,2]\n")
        }

        @Test("values that look like negative numbers are values")
        func negativeNumbers() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "n", "-5", "--type", "int").status == 0)
            #expect(daemon.cli("get", "n").output == "-5\n")
            #expect(daemon.cli("set", "d", "-0.5", "--type", "double").status == 0)
            #expect(daemon.cli("get", "d").output == "-0.5\n")
            #expect(daemon.cli("set", "i", "-inf", "--type", "double").status == 0)
            #expect(daemon.cli("get", "i").output == #"{"$double":"-inf"}"# + "\n")
            #expect(daemon.cli("set", "j", "--json", "-5").status == 0)
            #expect(daemon.cli("get", "j").output == "-5\n")
            #expect(DaemonProcess.run(["set", "--socket", daemon.socket, "--", "-k", "text"]).status == 0)
            #expect(DaemonProcess.run(["get", "--socket", daemon.socket, "--", "-k"]).output == "text\n")
        }

        @Test("conflicting or repeated options, bad numbers and invalid UTF-8 are usage errors")
        func usageErrors() throws {
            let daemon = try DaemonProcess(directory)
            let cases: [([String], String)] = [
                (["set", "k", "1", "--type", "int", "--type", "bool"], "--type is given more than once"),
                (["set", "k", "1", "--json", "--type", "string"], "cannot be used together"),
                (["set", "k", "1e309", "--type", "double"], "out of the range of a double"),
                (["set", "k", "--json", "[1, null]"], "null cannot stand inside a value"),
                (["list", "--pretty"], "--pretty goes with --json"),
            ]
            for (arguments, message) in cases {
                let result = daemon.cli(arguments[0], Array(arguments.dropFirst()))
                #expect(result.status == 64, "\(arguments)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
            }
            #expect(daemon.cli("get", "k").status == 1)
            // `-h` after `--` is a value, not a request for help.
            #expect(DaemonProcess.run(["set", "--socket", daemon.socket, "k", "--", "-h"]).status == 0)
            #expect(daemon.cli("get", "k").output == "-h\n")
            // Bytes that are not UTF-8 are refused, not turned into U+FFFD.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c", "\"$0\" set bad \"$(printf 'a\\377b')\" --socket \"$1\"", SettingsdBinary.path,
                daemon.socket,
            ]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 64)
            #expect(daemon.cli("get", "bad").status == 1)
        }

        @Test("list and watch show one line per key, strings quoted and escaped, dates in ISO 8601")
        func humanOutput() async throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "a.text", "two\nlines").status == 0)
            #expect(daemon.cli("set", "a.string", "1").status == 0)
            #expect(daemon.cli("set", "a.number", "1", "--type", "int").status == 0)
            #expect(daemon.cli("set", "a.when", "2026-11-29T13:40:00.25Z", "--type", "date").status == 0)
            #expect(
                daemon.cli("list", "a.").output
                    == "a.number = 1\na.string = \"1\"\na.text = \"two\\nlines\"\na.when = 2026-11-29T13:40:00.25Z\n"
            )
            #expect(daemon.cli("get", "a.when").output == "2026-11-29T13:40:00.25Z\n")
            // What it prints, it reads.
            #expect(daemon.cli("set", "b.when", "2026-11-29T13:40:00.25Z", "--type", "date").status == 0)
            #expect(
                daemon.cli("get", "b.when", "--json").output == daemon.cli("get", "a.when", "--json").output)
            #expect(daemon.cli("list", "a.", "--json").output.split(separator: "\n").count == 1)
            #expect(daemon.cli("list", "a.", "--json", "--pretty").output.split(separator: "\n").count > 1)
            let status = daemon.cli("status").output
            #expect(status.contains("uptime: ") && !status.contains("uptimeSeconds"))
        }

        @Test("$SETTINGSD_DB is used when no daemon holds it, and import accepts a byte-order mark")
        func environmentAndBOM() throws {
            let database = directory.file("env.sqlite")
            var environment = ProcessInfo.processInfo.environment
            environment["SETTINGSD_DB"] = database
            environment["SETTINGSD_SOCKET"] = "/tmp/sdt-none-\(UUID().uuidString.prefix(8)).sock"
            #expect(DaemonProcess.run(["set", "e", "1"], environment: environment).status == 0)
            #expect(DaemonProcess.run(["get", "e", "--db", database]).output == "1\n")
            let file = directory.file("bom.json")
            let document = #"{"format":"settingsd-export","version":1,"values":{"b":true}}"#
            try Data([0xEF, 0xBB, 0xBF] + Array(document.utf8)).write(to: URL(fileURLWithPath: file))
            #expect(DaemonProcess.run(["import", file], environment: environment).status == 0)
            #expect(DaemonProcess.run(["get", "b"], environment: environment).output == "true\n")
        }
    }
}

extension DaemonProcess {
    /// Runs the CLI against this daemon with `first` and then `rest` as arguments.
    func cli(_ first: String, _ rest: [String]) -> CLIResult {
        Self.run([first] + rest + ["--socket", socket])
    }
}
