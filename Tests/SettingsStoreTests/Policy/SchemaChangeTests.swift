import Foundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Values a schema change made invalid are named wherever the value is shown")
    struct SchemaChangeTests {
        @Test("get --explain, describe, list --schema and schema check --store say the value no longer fits")
        func invalidatedValuesAreReported() async throws {
            let directory = TemporaryDirectory()
            let schemas = directory.file("schemas")
            try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
            func write(_ rules: String) throws {
                try #"{"format": "settingsd-schema", "version": 1, "keys": {\#(rules)}}"#
                    .write(toFile: schemas + "/app.json", atomically: true, encoding: .utf8)
            }
            try write(#""app.level": {"type": "int", "max": 10}, "app.name": {"type": "string"}"#)
            let daemon = try DaemonProcess(directory, arguments: ["--schemas", schemas])
            #expect(daemon.cli("set", "app.level", "8").status == 0)
            #expect(daemon.cli("set", "app.name", "x").status == 0)
            let fine = daemon.cli("schema", "check", "--store")
            #expect(fine.status == 0 && fine.error.contains("every stored value fits"), "\(fine.error)")

            // The maximum is lowered below the stored value and the name's type changes.
            try write(#""app.level": {"type": "int", "max": 5}, "app.name": {"type": "int"}"#)
            try await waitUntil { daemon.cli("describe", "app.name").output.contains("type: int") }
            let explained = daemon.cli("get", "app.level", "--explain")
            #expect(
                explained.output.contains("8\nfrom: the user's value\nwarning: the schema changed since:"),
                "\(explained.output)")
            #expect(explained.output.contains("must be at most 5"))
            #expect(
                daemon.cli("get", "app.level", "--explain", "--json").output.contains("\"schemaProblem\""))
            #expect(daemon.cli("describe", "app.name").output.contains("warning: the schema changed since:"))
            #expect(daemon.cli("list", "--schema").output.contains("(does not fit the schema now:"))
            let check = daemon.cli("schema", "check", "--store")
            #expect(check.status == 1)
            #expect(check.output.split(separator: "\n").count == 2, "\(check.output)")
            // Fixing the value clears the warning; the value itself was kept all along.
            #expect(daemon.cli("set", "app.level", "4").status == 0)
            #expect(!daemon.cli("get", "app.level", "--explain").output.contains("warning"))
        }
    }
}
