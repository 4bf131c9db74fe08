import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Schemas, system defaults and locks through the daemon, the CLI and clients")
    struct PolicyDaemonTests {
        let directory = TemporaryDirectory()

        private func daemon(_ system: SystemFolder, strict: Bool = false) throws -> DaemonProcess {
            try DaemonProcess(
                directory,
                arguments: ["--schemas", exampleSchemaDirectory, "--system-dir", system.path]
                    + (strict ? ["--strict-schemas"] : []))
        }

        @Test("the CLI types values by schema; describe, get --explain, list --schema and reset")
        func cli() throws {
            let system = try SystemFolder(
                directory, defaults: ["10.json": #"{"ui.theme": "dark"}"#], locks: ["audio": "audio.muted\n"])
            let node = try daemon(system)
            #expect(node.cli("set", "audio.volume", "0.8").status == 0)
            #expect(node.cli("get", "audio.volume", "--json").output == "0.8\n")
            #expect(node.cli("set", "ui.font.size", "14").status == 0)
            #expect(node.cli("get", "ui.font.size", "--json").output == "14\n")
            let bad = node.cli("set", "audio.volume", "2")
            #expect(bad.status == 1)
            #expect(bad.error.contains("must be at most 1"), "\(bad.error)")
            #expect(bad.error.split(separator: "\n").count == 1)
            let locked = node.cli("set", "audio.muted", "true")
            #expect(locked.status == 1)
            #expect(locked.error.contains("locked by \(system.path)/locks.d/audio"), "\(locked.error)")

            let explain = node.cli("get", "ui.theme", "--explain").output
            #expect(
                explain
                    == "dark\nfrom: system default from \(system.path)/defaults.d/10.json\noverrides: schema default from \(exampleSchemaDirectory)/example.json: \"light\"\n",
                "\(explain)"
            )
            let described = node.cli("describe", "audio.volume").output
            for line in [
                "type: double", "default: 0.5", "range: 0 to 1", "summary: Output volume", "scope: synced",
                "value: 0.8", "from: the user's value",
            ] {
                #expect(described.contains(line), "\(line) in \(described)")
            }
            let pattern = node.cli("describe", "window.main.size").output
            #expect(pattern.contains("type: any (by pattern window.*)"), "\(pattern)")
            #expect(pattern.contains("scope: local (never synced)"))
            let muted = node.cli("describe", "audio.muted").output
            #expect(muted.contains("locked by: \(system.path)/locks.d/audio"), "\(muted)")
            let listed = node.cli("list", "--schema").output
            #expect(listed.contains("audio.volume (double) = 0.8  [the user's value]"), "\(listed)")
            #expect(listed.contains("window.* (any, local) = unset  [pattern]"), "\(listed)")

            _ = node.cli("set", "ui.theme", "light")
            #expect(node.cli("reset", "ui.").status == 0)
            #expect(node.cli("get", "ui.theme").output == "dark\n")
            #expect(node.cli("reset", "audio.volume").status == 0)
            #expect(node.cli("get", "audio.volume").output == "0.5\n")
        }

        @Test("clients, imports and strict schemas meet the same rules")
        func otherPaths() async throws {
            let system = try SystemFolder(directory)
            let node = try daemon(system, strict: true)
            let client = try await SettingsClient.connect(to: node.socket)
            defer { client.close() }
            let error = await #expect(throws: SettingsError.self) {
                try await client.set("purple", forKey: "ui.theme")
            }
            #expect(error?.code == .schemaViolation)
            let strict = await #expect(throws: SettingsError.self) {
                try await client.set(1, forKey: "undeclared")
            }
            #expect(strict?.code == .schemaViolation)
            let file = directory.file("import.json")
            try
                #"{"format": "settingsd-export", "version": 1, "values": {"ui.theme": "dark", "audio.volume": 9}}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            let imported = node.cli("import", file)
            #expect(imported.status == 1)
            #expect(imported.error.contains("audio.volume"), "\(imported.error)")
            #expect(node.cli("get", "ui.theme").output == "light\n")  // nothing of the import was written
        }

        @Test("SIGHUP and a file change reload defaults and locks; watchers hear it as system")
        func reload() async throws {
            let system = try SystemFolder(directory)
            let node = try daemon(system)
            let watcher = try node.client()
            try watcher.request(.watch(filter: .keys(["ui.theme"])))
            try system.write(defaults: ["20.json": #"{"ui.theme": "dark"}"#], locks: [:])
            // inotify notices the new file on its own.
            var change = try watcher.nextEvent().change
            #expect(change.reason == .system)
            #expect(change.changes.first?.value == "dark")
            #expect(node.cli("get", "ui.theme").output == "dark\n")
            // A lock written in place, then SIGHUP (both reload; the change is announced once).
            try system.write(defaults: ["20.json": #"{"ui.theme": "dark"}"#], locks: ["ui": "ui.\n"])
            kill(node.process.processIdentifier, SIGHUP)
            try await waitUntil { node.cli("set", "ui.theme", "light").status == 1 }
            #expect(node.cli("set", "ui.theme", "light").error.contains("locked by"))
            try system.write(defaults: [:], locks: [:])
            change = try watcher.nextEvent().change
            #expect(change.reason == .system)
            #expect(change.changes.first?.value == "light")  // back to the schema default
        }

        @Test("a broken schema file stops the daemon at start with one line naming the file")
        func brokenSchemaAtStart() throws {
            let folder = directory.file("broken-schemas")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try #"{"format": "settingsd-schema", "version": 1, "keys": {"a": {"type": "float"}}}"#.write(
                toFile: "\(folder)/bad.json", atomically: true, encoding: .utf8)
            let result = DaemonProcess.run([
                "run", "--db", directory.database, "--socket", directory.file("s.sock"), "--schemas", folder,
                "--system-dir", directory.file("etc"),
            ])
            #expect(result.status == 1)
            #expect(result.error.contains("\(folder)/bad.json"), "\(result.error)")
            #expect(result.error.contains("unknown type 'float'"), "\(result.error)")
        }

        /// A schema every part of which is hard to turn into Swift: names that collide once
        /// punctuation is gone, keywords, a leading digit, summaries over lines, defaults that
        /// are not literals (NaN, infinities, data, dates) at the top and nested.
        static let hostileSchema = #"""
            {"format": "settingsd-schema", "version": 1, "keys": {
              "ui.font_size": {"type": "int", "default": 1, "summary": "one\ntwo\r\nthree"},
              "ui.fontSize": {"type": "int", "default": 2}, "ui.font.size": {"type": "int"},
              "ui-font-size": {"type": "int"}, "ui.font.size2": {"type": "string", "default": "x\"y\\z"},
              "default": {"type": "bool", "default": true}, "9lives": {"type": "double", "default": 9},
              "n.nan": {"type": "double", "default": {"$double": "nan"}},
              "n.inf": {"type": "double", "default": {"$double": "-inf"}},
              "n.any": {"type": "any", "default": {"$double": "inf"}},
              "n.data": {"type": "data", "default": {"$data": "AAE="}},
              "n.when": {"type": "date", "default": {"$date": 0.5}},
              "n.list": {"type": "array", "default": [{"$data": "AAE="}, {"$date": 1}, {"$double": "nan"}, 1.5, "s", true, [1]]},
              "n.dict": {"type": "dictionary", "default": {"a": {"$date": 2}, "b": {"x": [{"$data": ""}]}}},
              "n.*.size": {"type": "int"},
              "n.mode": {"type": "string", "choices": ["dark-mode", "default", "dark_mode", "1st"], "default": "default"},
              "n.pick": {"type": "string", "choices": ["a", "b"]}
            }}
            """#

        @Test("generated Swift keys compile against SettingsStore, for hostile schemas and GNOME's too")
        func generatedSwiftCompiles() throws {
            let generated = DaemonProcess.run(["schema", "swift", "\(exampleSchemaDirectory)/example.json"])
            #expect(generated.status == 0)
            #expect(
                generated.output.contains(
                    "static let audioVolume = SettingKey<Double>(\"audio.volume\", default: 0.5)"))
            let hostile = directory.file("hostile.json")
            try Self.hostileSchema.write(toFile: hostile, atomically: true, encoding: .utf8)
            let hostileSwift = DaemonProcess.run(["schema", "swift", hostile])
            #expect(hostileSwift.status == 0, "\(hostileSwift.error)")
            #expect(hostileSwift.output.contains("static let uiFontSize2 ="), "\(hostileSwift.output)")
            #expect(hostileSwift.output.contains("SettingKey<NMode>(\"n.mode\", default: .`default`)"))
            #expect(generated.output.contains("enum UiTheme: String, SettingValueConvertible"))
            var sources = [generated.output, hostileSwift.output]
            if FileManager.default.fileExists(atPath: "/usr/share/glib-2.0/schemas") {
                let gnome = DaemonProcess.run(["schema", "swift", "/usr/share/glib-2.0/schemas"])
                #expect(gnome.status == 0, "\(gnome.error)")
                sources.append(gnome.output)
            }
            for (index, text) in sources.enumerated() {
                try typecheck(
                    text
                        + (index == 0
                            ? "\nlet check: Double = SettingKeys.audioVolume.defaultValue\nlet theme: SettingKeys.UiTheme = SettingKeys.uiTheme.defaultValue\n"
                            : ""),
                    index)
            }
        }

        private func typecheck(_ text: String, _ index: Int) throws {
            let source = directory.file("Keys\(index).swift")
            try text.write(toFile: source, atomically: true, encoding: .utf8)
            let build = URL(fileURLWithPath: SettingsdBinary.path).deletingLastPathComponent().path
            let sources = URL(fileURLWithPath: exampleSchemaDirectory).deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Sources").path
            let swiftc = ProcessInfo.processInfo.environment["SWIFT_EXEC"] ?? "/usr/bin/env"
            let arguments =
                (swiftc == "/usr/bin/env" ? ["swiftc"] : [])
                + [
                    "-typecheck", source, "-I", "\(build)/Modules", "-I", "\(sources)/CSQLite", "-I",
                    "\(sources)/CLibPQ", "-I", "\(sources)/CDconf", "-I", "\(sources)/CLinux", "-I",
                    "/usr/include/postgresql",
                ]
            let result = DaemonProcess.run(arguments, through: swiftc)
            #expect(result.status == 0, "\(result.error)")
        }
    }
}
