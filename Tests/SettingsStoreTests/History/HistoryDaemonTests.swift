import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("History through the daemon and the CLI")
    struct HistoryDaemonTests {
        let directory = TemporaryDirectory()

        @Test(
            "rows a live daemon still owes are read from their records by --db, and by the daemon after SIGKILL"
        )
        func owedRowsOnEveryPath() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "ui.theme", "dark").status == 0)
            #expect(daemon.cli("delete", "ui.theme").status == 0)
            #expect(daemon.cli("set", "audio.volume", "0.8", "--type", "double").status == 0)
            #expect(try querySQLite(daemon.database, "SELECT count(*) FROM entries") == "0")
            let direct = DaemonProcess.run(["list", "--db", daemon.database])
            #expect(direct.output == "audio.volume = 0.8\n", "\(direct.error)")
            #expect(DaemonProcess.run(["get", "ui.theme", "--db", daemon.database]).status != 0)
            daemon.kill()
            try daemon.start()
            #expect(daemon.cli("get", "audio.volume").output == "0.8\n")
            #expect(daemon.cli("history", "ui.theme", "--json").output.split(separator: "\n").count == 2)
            #expect(try querySQLite(daemon.database, "SELECT count(*) FROM entries") == "2")
        }

        @Test("the CLI client's uid, pid and executable are recorded; history prints lines and JSON")
        func actorOfACLIClient() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "audio.volume", "0.5", "--type", "double").status == 0)
            #expect(daemon.cli("set", "audio.volume", "0.8", "--type", "double").status == 0)
            let lines = daemon.cli("history", "audio.volume").output.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(
                lines.first?.contains(
                    "audio.volume  0.5 → 0.8  uid \(getuid()) \(SettingsdBinary.path)  local") == true,
                "\(lines)")
            let json = daemon.cli("history", "audio.volume", "--json", "--limit", "1").output
            let record = try JSONValue.parse(Array(json.utf8.dropLast()))
            #expect(record["value"] == .double(0.8))
            #expect(record["previous"] == .double(0.5))
            #expect(record["deleted"] == .bool(false))
            #expect(record["uid"] == .integer(Int64(getuid())))
            #expect(record["exe"] == .string(SettingsdBinary.path))
            if case .integer(let pid)? = record["pid"] { #expect(pid > 0) } else { Issue.record("no pid") }
            if case .string(let time)? = record["time"] {
                #expect(time.hasSuffix("Z"))
            } else {
                Issue.record("no time")
            }
            #expect(try daemon.status().keys == 1)
        }

        @Test("revert --to and --before through the CLI reach a peer; export --at writes the past")
        func revertThroughTheCLI() async throws {
            let a = try DaemonProcess(directory, database: directory.file("a.sqlite"))
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"), arguments: ["--peer", a.socket])
            _ = a.cli("set", "ui.theme", "first")
            let version = try #require(
                try JSONValue.parse(Array(a.cli("history", "ui.theme", "--json").output.utf8.dropLast()))[
                    "version"])
            try await Task.sleep(for: .milliseconds(20))
            let middle = String(Double(SettingsConfiguration.systemClock()) / 1000)
            try await Task.sleep(for: .milliseconds(20))
            _ = a.cli("set", "ui.theme", "second")
            _ = a.cli("set", "ui.extra", "x")
            let exported = directory.file("past.json")
            #expect(a.cli("export", exported, "--at", middle).status == 0)
            let document = try ExportDocument(
                jsonText: Array(try String(contentsOfFile: exported, encoding: .utf8).utf8))
            #expect(document.values == ["ui.theme": "first"])
            guard case .string(let text) = version else { return }
            #expect(a.cli("revert", "ui.theme", "--to", text).status == 0)
            #expect(a.cli("get", "ui.theme").output == "first\n")
            _ = a.cli("set", "ui.theme", "third")
            #expect(a.cli("revert", "ui.", "--before", middle).status == 0)
            #expect(a.cli("get", "ui.extra").status == 1)
            try await waitUntil(timeout: 60) {
                b.cli("get", "ui.theme").output == "first\n" && b.cli("get", "ui.extra").status == 1
            }
            #expect(a.cli("history", "ui.theme", "--limit", "1").output.hasSuffix("revert\n"))
            let bad = a.cli("revert", "ui.theme")
            #expect(bad.status == 64)
        }

        @Test("history survives SIGKILL exactly as the data does")
        func crash() throws {
            let daemon = try DaemonProcess(directory)
            let client = try daemon.client()
            for index in 0..<300 {
                try client.request(.set(key: "k.\(index % 30)", value: .integer(Int64(index))))
            }
            daemon.kill()
            try daemon.start()
            let settings = try daemon.status()
            #expect(settings.sequence == 300)
            let all = try daemon.client().request(.history(HistoryQuery(limit: 100_000)))
            guard case .array(let records)? = all["records"] else {
                Issue.record("no records")
                return
            }
            #expect(records.count == 300)
            #expect(records.first?["value"] == .integer(299))
        }
    }
}
