import Foundation
import Synchronization

@testable import SettingsStore

/// A Flatpak installation laid out as Flatpak lays it out, with one app whose schema is compiled
/// by `glib-compile-schemas`, and a home per machine holding the app's folder (`~/.var/app`).
struct FlatpakFixture {
    static let app = "org.example.Notes"
    /// The store key of one of the app's keys.
    static func key(_ name: String) -> String { "flatpak.\(app).org.example.Notes.\(name)" }

    let directory: TemporaryDirectory
    /// The installation (`FLATPAK_USER_DIR`).
    let installation: String
    /// The app's compiled schemas.
    let schemas: String
    /// settingsd schemas beside them: the last printer stays on each machine (the user's list;
    /// the window's width stays by the built-in one).
    let settingsdSchemas: String

    init(_ directory: TemporaryDirectory) throws {
        self.directory = directory
        installation = directory.file("installation")
        schemas = installation + "/app/\(Self.app)/current/active/files/share/glib-2.0/schemas"
        settingsdSchemas = directory.file("settingsd-schemas")
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: settingsdSchemas, withIntermediateDirectories: true)
        try """
        <schemalist>
          <schema id="org.example.Notes" path="/org/example/Notes/">
            <key name="font-size" type="i"><default>12</default><range min="6" max="72"/>
              <summary>Text size</summary><description>The size of the text, in points.</description></key>
            <key name="theme" type="s"><choices><choice value="light"/><choice value="dark"/></choices>
              <default>'light'</default><summary>Colour theme</summary></key>
            <key name="recent" type="as"><default>[]</default><summary>Recent files</summary></key>
            <key name="window-width" type="i"><default>800</default><summary>Window width</summary></key>
            <key name="last-printer" type="s"><default>''</default><summary>The printer used last</summary></key>
          </schema>
        </schemalist>
        """.write(toFile: schemas + "/org.example.Notes.gschema.xml", atomically: true, encoding: .utf8)
        let compiled = DaemonProcess.run([schemas], through: "/usr/bin/glib-compile-schemas")
        guard compiled.status == 0 else {
            throw SettingsError(.io, "glib-compile-schemas: \(compiled.error)")
        }
        try """
        {"format": "settingsd-schema", "version": 1, "keys": {
          "\(Self.key("last-printer"))": {"scope": "local"}}}
        """.write(toFile: settingsdSchemas + "/notes-local.json", atomically: true, encoding: .utf8)
    }

    /// A machine's home, with the app's folder in it (the app has run there).
    func home(_ name: String) throws -> String {
        let home = directory.file("home-\(name)")
        try FileManager.default.createDirectory(
            atPath: home + "/.var/app/\(Self.app)", withIntermediateDirectories: true)
        return home
    }

    /// The app's keyfile in `home`.
    static func keyfile(in home: String) -> String {
        home + "/.var/app/\(app)/config/glib-2.0/settings/keyfile"
    }

    /// Writes `text` as the app's keyfile in `home` (as the app would have), returning its path.
    @discardableResult
    static func writeKeyfile(_ text: String, in home: String) throws -> String {
        let keyfile = keyfile(in: home)
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: keyfile).deletingLastPathComponent().path,
            withIntermediateDirectories: true)
        try text.write(toFile: keyfile, atomically: true, encoding: .utf8)
        return keyfile
    }

    /// A daemon for `home` mirroring the app (`--flatpak`), with `arguments`.
    func daemon(home: String, arguments: [String]) throws -> DaemonProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["FLATPAK_USER_DIR"] = installation
        environment["FLATPAK_SYSTEM_DIR"] = directory.file("no-system-installation")
        return try DaemonProcess(
            directory, database: directory.file("\(URL(fileURLWithPath: home).lastPathComponent).sqlite"),
            arguments: ["--flatpak", "--schemas", settingsdSchemas] + arguments, environment: environment)
    }
}

/// The app itself: a GLib process (PyGObject) holding a `Gio.Settings` on the keyfile backend, as
/// inside the sandbox, printing each `changed` signal; it sets and resets keys when told.
final class GLibApp {
    private let process = Process()
    private let input = Pipe()
    private let lines = Lines()

    /// The lines printed so far, shared with the pipe's reader.
    private final class Lines: Sendable {
        let printed = Mutex<[String]>([])
    }

    /// `scripts/glib-settings-app`, which the benchmark drives too.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "scripts/glib-settings-app"
        ).path

    /// Starts the app with its sandbox's `XDG_CONFIG_HOME` in `home`.
    init(home: String, fixture: FlatpakFixture) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, FlatpakFixture.app]
        var environment = ProcessInfo.processInfo.environment
        environment["GSETTINGS_BACKEND"] = "keyfile"
        environment["XDG_CONFIG_HOME"] = home + "/.var/app/\(FlatpakFixture.app)/config"
        environment["GSETTINGS_SCHEMA_DIR"] = fixture.schemas
        process.environment = environment
        process.standardInput = input
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read on a thread of its own, whole lines only (a line may arrive in two reads).
        let reader = output.fileHandleForReading
        Thread.detachNewThread { [lines] in
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending += data
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...end)
                    lines.printed.withLock { $0.append(line) }
                }
            }
        }
        try await awaitLine("ready")
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Tells the app to run `command` (`set KEY GVARIANT`, `reset KEY`) and waits until it has.
    func run(_ command: String) async throws {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        try await awaitLine("done " + command)
    }

    /// Waits until the app has printed `line`.
    func awaitLine(_ line: String, fileID: StaticString = #fileID, lineNumber: UInt = #line) async throws {
        try await waitUntil(fileID: fileID, line: lineNumber) { lines.printed.withLock { $0.contains(line) } }
    }

    /// What the app printed.
    var printed: [String] { lines.printed.withLock { $0 } }
}
