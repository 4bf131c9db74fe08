import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("settingsd CLI against a real daemon")
    struct DaemonCLITests {
        let directory = TemporaryDirectory()

        @Test("set, get, list and delete round-trip typed values")
        func roundTrip() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "ui.theme", "dark").status == 0)
            #expect(daemon.cli("set", "audio.volume", "0.5", "--type", "double").status == 0)
            #expect(daemon.cli("set", "window", "--json", #"{"w": 800, "h": 1.5}"#).status == 0)
            #expect(daemon.cli("set", "flag", "yes", "--type", "bool").status == 0)
            #expect(daemon.cli("get", "ui.theme").output == "dark\n")
            #expect(daemon.cli("get", "ui.theme", "--json").output == "\"dark\"\n")
            #expect(daemon.cli("get", "audio.volume").output == "0.5\n")
            #expect(daemon.cli("get", "window").output == #"{"h":1.5,"w":800}"# + "\n")
            #expect(daemon.cli("list", "audio.").output == "audio.volume = 0.5\n")
            #expect(daemon.cli("delete", "ui.theme").status == 0)
            let unset = daemon.cli("get", "ui.theme")
            #expect(unset.status == 1)
            #expect(unset.error == "Error: 'ui.theme' is not set\n")
        }

        @Test("bad usage exits 64 with a hint; help and --version exit 0")
        func usageAndHelp() {
            let missing = DaemonProcess.run(["set", "only-a-key"])
            #expect(missing.status == 64)
            #expect(missing.error.contains("See 'settingsd help set'"))
            #expect(DaemonProcess.run(["frobnicate"]).status == 64)
            #expect(DaemonProcess.run(["get", "k", "--bogus"]).status == 64)
            #expect(DaemonProcess.run(["set", "k", "x", "--type", "int"]).status == 64)
            let help = DaemonProcess.run(["help", "set"])
            #expect(help.status == 0)
            for section in ["OVERVIEW:", "USAGE:", "ARGUMENTS:", "OPTIONS:"] {
                #expect(help.output.contains(section))
            }
            #expect(DaemonProcess.run(["-h"]).output.contains("SUBCOMMANDS:"))
            #expect(DaemonProcess.run(["get", "--help"]).output.contains("USAGE: settingsd get"))
            #expect(
                DaemonProcess.run(["--version"]).output.hasPrefix("settingsd \(SettingsdVersion.current)"))
        }

        @Test("without a daemon, get says so in one line naming the socket and how to start one")
        func noDaemon() {
            let socket = "/tmp/sdt-none-\(UUID().uuidString.prefix(8)).sock"
            let result = DaemonProcess.run(["get", "k", "--socket", socket])
            #expect(result.status == 1)
            #expect(result.error.contains(socket))
            #expect(result.error.contains("settingsd run"))
            #expect(result.error.split(separator: "\n").count == 1)
        }

        @Test(
            "--db works on a file directly; while a daemon holds it, reads still work and writes are refused")
        func directDatabase() throws {
            let database = directory.file("direct.sqlite")
            #expect(DaemonProcess.run(["set", "a", "1", "--type", "int", "--db", database]).status == 0)
            #expect(DaemonProcess.run(["get", "a", "--db", database]).output == "1\n")
            let daemon = try DaemonProcess(directory, database: database)
            #expect(DaemonProcess.run(["get", "a", "--db", database]).output == "1\n")
            let refused = DaemonProcess.run(["set", "a", "2", "--db", database])
            #expect(refused.status == 1)
            #expect(refused.error.contains("already open in process \(daemon.process.processIdentifier)"))
            #expect(daemon.cli("get", "a").output == "1\n")
        }

        @Test("export then import restores every value; a malformed import changes nothing and says why")
        func exportImport() throws {
            let daemon = try DaemonProcess(directory)
            _ = daemon.cli("set", "a", "--json", #"[1, 2.5, {"$data": "AAE="}]"#)
            _ = daemon.cli("set", "b", "text")
            let file = directory.file("export.json")
            #expect(daemon.cli("export", file).status == 0)
            _ = daemon.cli("delete", "a")
            _ = daemon.cli("set", "c", "extra")
            #expect(daemon.cli("import", file, "--replace").status == 0)
            #expect(daemon.cli("list", "--json").output.contains(#""$data":"AAE=""#))
            #expect(daemon.cli("get", "c").status == 1)
            let hostile = directory.file("hostile.json")
            try #"{"format": "settingsd-export", "version": 1, "values": {"ok": 1, "bad": null}}"#.write(
                toFile: hostile, atomically: true, encoding: .utf8)
            let result = daemon.cli("import", hostile)
            #expect(result.status == 1)
            #expect(result.error.contains("bad"))
            #expect(daemon.cli("get", "ok").status == 1)
        }

        @Test("watch prints one line per change of the watched keys")
        func watch() async throws {
            let daemon = try DaemonProcess(directory)
            let (watcher, output) = try daemon.watcher("audio.")
            defer { watcher.terminate() }
            // The watch is registered once the daemon counts it.
            let client = try daemon.client()
            try await waitUntil { try DaemonStatus(fields: client.request(.status)).watches == 1 }
            _ = daemon.cli("set", "video.size", "1")
            _ = daemon.cli("set", "audio.volume", "0.8", "--type", "double")
            _ = daemon.cli("delete", "audio.volume")
            var text = ""
            while text.split(separator: "\n").count < 2 {
                // Empty data is the end of the pipe: the watcher died, and the lines never come.
                let data = output.fileHandleForReading.availableData
                guard !data.isEmpty else { break }
                text += String(decoding: data, as: UTF8.self)
            }
            #expect(text == "local audio.volume = 0.8\nlocal audio.volume deleted\n")
        }
    }
}
