import Foundation
import Testing

@testable import SettingsGNOME
@testable import SettingsStore

@Suite(
    "Flatpak apps' settings: keyfiles mirrored both ways, typed by the apps' own schemas",
    .timeLimit(.minutes(2)))
struct FlatpakBridgeTests {
    let directory = TemporaryDirectory()

    @Test(
        "a change on another machine reaches the running app; the app's changes reach it typed; a local key stays; a reset travels"
    )
    func twoMachinesThroughAFolder() async throws {
        let fixture = try FlatpakFixture(directory)
        let folder = directory.file("synced")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let homeA = try fixture.home("a")
        let homeB = try fixture.home("b")
        let a = try fixture.daemon(home: homeA, arguments: ["--plain-folder", folder, "--name", "a"])
        let b = try fixture.daemon(home: homeB, arguments: ["--plain-folder", folder, "--name", "b"])
        let app = try await GLibApp(home: homeA, fixture: fixture)

        #expect(b.cli("set", FlatpakFixture.key("font-size"), "30").status == 0)
        do {
            try await app.awaitLine("changed font-size 30")
        } catch {
            Issue.record(
                "A: \(a.cli("get", FlatpakFixture.key("font-size")).output) \(a.cli("status").output) app: \(app.printed) keyfile: \((try? String(contentsOfFile: FlatpakFixture.keyfile(in: homeA), encoding: .utf8)) ?? "none")"
            )
            throw error
        }

        try await app.run("set window-width 1024")
        try await app.run("set last-printer 'desk-printer'")
        try await app.run("set recent ['notes.txt', 'todo.txt']")
        try await app.run("set theme 'dark'")
        try await waitUntil { b.cli("get", FlatpakFixture.key("theme")).output == "dark\n" }
        #expect(b.cli("get", FlatpakFixture.key("recent")).output == #"["notes.txt","todo.txt"]"# + "\n")
        #expect(b.cli("describe", FlatpakFixture.key("recent")).output.contains("GVariant 'as'"))
        #expect(a.cli("get", FlatpakFixture.key("window-width")).output == "1024\n")
        #expect(
            b.cli("get", FlatpakFixture.key("window-width")).output == "800\n",
            "the built-in local key stays on A")
        #expect(a.cli("get", FlatpakFixture.key("last-printer")).output == "desk-printer\n")
        #expect(
            b.cli("get", FlatpakFixture.key("last-printer")).output == "\n", "the user's local key stays on A"
        )
        #expect(b.cli("set", FlatpakFixture.key("theme"), "blue").status != 0, "the app's choices hold on B")

        try await app.run("reset theme")
        try await waitUntil { b.cli("get", FlatpakFixture.key("theme")).output == "light\n" }
        #expect(!b.cli("list", "flatpak.").output.contains("theme"))
        let history = a.cli("history", FlatpakFixture.key("theme")).output
        #expect(history.contains("flatpak:\(FlatpakFixture.app)"), "the history names the app: \(history)")
        #expect(a.cli("status").output.contains("flatpak 1 app(s): running"))
    }

    @Test("an unchanged keyfile stays byte for byte; a change rewrites only its own line")
    func byteForByte() async throws {
        let fixture = try FlatpakFixture(directory)
        let home = try fixture.home("a")
        let original =
            "# my notes app\n[org/example/Notes]\nfont-size=14\n\n[org/other/Plugin]\nenabled=true\n"
        let keyfile = try FlatpakFixture.writeKeyfile(original, in: home)
        let daemon = try fixture.daemon(home: home, arguments: [])
        try await waitUntil { daemon.cli("get", FlatpakFixture.key("font-size")).output == "14\n" }
        #expect(try String(contentsOfFile: keyfile, encoding: .utf8) == original)
        #expect(daemon.cli("set", FlatpakFixture.key("theme"), "dark").status == 0)
        let expected =
            "# my notes app\n[org/example/Notes]\nfont-size=14\ntheme='dark'\n\n[org/other/Plugin]\nenabled=true\n"
        try await waitUntil { (try? String(contentsOfFile: keyfile, encoding: .utf8)) == expected }
        #expect(daemon.cli("list", "flatpak.").output.contains("font-size = 14"))
    }

    @Test(
        "hostile keyfiles are refused with the reason; nothing is taken, nothing written outside the app's folder"
    )
    func hostileKeyfiles() async throws {
        let fixture = try FlatpakFixture(directory)
        let outside = directory.file("outside.txt")
        let outsideText = "[org/example/Notes]\nfont-size=40\n"
        let cases: [(String, (String) throws -> Void)] = [
            (
                "a group that does not close",
                { keyfile in
                    try "[org/example/Notes\nfont-size=14\n".write(
                        toFile: keyfile, atomically: true, encoding: .utf8)
                }
            ),
            (
                "a keyfile that is a link out of the app's folder",
                { keyfile in
                    try outsideText.write(toFile: outside, atomically: true, encoding: .utf8)
                    try FileManager.default.createSymbolicLink(atPath: keyfile, withDestinationPath: outside)
                }
            ),
            (
                "a settings folder that is a link",
                { keyfile in
                    let settings = URL(fileURLWithPath: keyfile).deletingLastPathComponent().path
                    try FileManager.default.removeItem(atPath: settings)
                    let elsewhere = directory.file("elsewhere")
                    try FileManager.default.createDirectory(
                        atPath: elsewhere, withIntermediateDirectories: true)
                    try outsideText.write(toFile: elsewhere + "/keyfile", atomically: true, encoding: .utf8)
                    try FileManager.default.createSymbolicLink(
                        atPath: settings, withDestinationPath: elsewhere)
                }
            ),
            (
                "a keyfile of 5 MiB",
                { keyfile in
                    let comment = String(repeating: "# padding\n", count: 530_000)
                    try (comment + "[org/example/Notes]\nfont-size=14\n").write(
                        toFile: keyfile, atomically: true, encoding: .utf8)
                }
            ),
            (
                "a keyfile that is not UTF-8",
                { keyfile in
                    try Data([0x5B, 0x61, 0x5D, 0x0A, 0x6B, 0x3D, 0xFF, 0xFE, 0x0A]).write(
                        to: URL(fileURLWithPath: keyfile))
                }
            ),
        ]
        for (index, (name, make)) in cases.enumerated() {
            let home = try fixture.home("case\(index)")
            let keyfile = FlatpakFixture.keyfile(in: home)
            try FileManager.default.createDirectory(
                atPath: URL(fileURLWithPath: keyfile).deletingLastPathComponent().path,
                withIntermediateDirectories: true)
            try make(keyfile)
            let before = try Data(contentsOf: URL(fileURLWithPath: keyfile))
            var configuration = SettingsConfiguration()
            configuration.policy = try SettingsPolicy.load(
                schemaDirectories: [], systemDirectory: directory.file("no-system"),
                extensions: SchemaExtensions(sources: [
                    FlatpakSchemaSource(
                        layout: FlatpakLayout(home: home, installations: [fixture.installation]),
                        apps: [FlatpakFixture.app])
                ]))
            let settings = Settings(inMemoryWith: configuration)
            let bridge = FlatpakBridge(
                settings: settings, layout: FlatpakLayout(home: home, installations: [fixture.installation]),
                apps: [FlatpakFixture.app], statePath: directory.file("states-\(index)"))
            try bridge.start()
            #expect(
                bridge.status.lastError?.contains("refused") == true,
                "\(name): \(String(describing: bridge.status.lastError))")
            #expect(settings.keys(withPrefix: "flatpak.").isEmpty, "\(name): nothing is taken")
            try settings.set(20, forKey: FlatpakFixture.key("font-size"))
            bridge.settle()
            bridge.settle()
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: keyfile)) == before, "\(name): nothing is written")
            if FileManager.default.fileExists(atPath: outside) {
                #expect(try String(contentsOfFile: outside, encoding: .utf8) == outsideText, "\(name)")
            }
            bridge.stop()
        }
    }

    @Test("a value the app's schema refuses is left out and named; the keyfile's other keys are taken")
    func refusedValue() async throws {
        let fixture = try FlatpakFixture(directory)
        let home = try fixture.home("a")
        try FlatpakFixture.writeKeyfile("[org/example/Notes]\nfont-size=many\ntheme='dark'\n", in: home)
        let daemon = try fixture.daemon(home: home, arguments: [])
        try await waitUntil { daemon.cli("get", FlatpakFixture.key("theme")).output == "dark\n" }
        #expect(daemon.cli("get", FlatpakFixture.key("font-size")).output == "12\n")
        #expect(daemon.cli("status").output.contains("font-size = many"))
    }

    @Test(
        "flatpak migrate copies the host's dconf values into the keyfile, keeps the keyfile's own, and --dry-run writes nothing"
    )
    func migrate() async throws {
        guard DconfSession.isAvailable else {
            Issue.record("dconf, dconf-service and dbus-daemon are needed (.ci/run installs them)")
            return
        }
        let fixture = try FlatpakFixture(directory)
        let session = try await DconfSession(TemporaryDirectory())
        #expect(session.dconf("write", "/org/example/Notes/font-size", "22").status == 0)
        #expect(session.dconf("write", "/org/example/Notes/theme", "'dark'").status == 0)
        #expect(session.dconf("write", "/org/example/Notes/recent", "['a.txt']").status == 0)
        let home = try fixture.home("a")
        let keyfile = try FlatpakFixture.writeKeyfile("[org/example/Notes]\ntheme='light'\n", in: home)
        var environment = session.environment
        environment["HOME"] = home
        environment["FLATPAK_USER_DIR"] = fixture.installation
        environment["FLATPAK_SYSTEM_DIR"] = directory.file("none")
        let dry = DaemonProcess.run(
            ["flatpak", "migrate", FlatpakFixture.app, "--dry-run"], environment: environment)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.output.contains("copy /org/example/Notes/font-size = 22"), "\(dry.output)")
        #expect(dry.output.contains("keep /org/example/Notes/theme"))
        #expect(
            try String(contentsOfFile: keyfile, encoding: .utf8) == "[org/example/Notes]\ntheme='light'\n")
        let done = DaemonProcess.run(["flatpak", "migrate", FlatpakFixture.app], environment: environment)
        #expect(done.status == 0, "\(done.error)")
        let written = try GLibKeyfile(text: try String(contentsOfFile: keyfile, encoding: .utf8))
        #expect(written.value(group: "org/example/Notes", key: "font-size") == "22")
        #expect(written.value(group: "org/example/Notes", key: "recent") == "['a.txt']")
        #expect(written.value(group: "org/example/Notes", key: "theme") == "'light'")
        #expect(
            session.dconf("read", "/org/example/Notes/font-size").output == "22\n", "dconf is left as it was")
        let unknown = DaemonProcess.run(
            ["flatpak", "migrate", "org.example.Missing"], environment: environment)
        #expect(unknown.status == 1 && unknown.error.contains("no compiled GSettings schemas"))
    }

    @Test("an app installed but never run is left alone: no error, no folder made for it")
    func neverRun() throws {
        let fixture = try FlatpakFixture(directory)
        let home = directory.file("home-fresh")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let daemon = try fixture.daemon(home: home, arguments: ["--flatpak-app", FlatpakFixture.app])
        let status = daemon.cli("status").output
        #expect(status.contains("flatpak 1 app(s): running"), "\(status)")
        #expect(!status.contains("last error"), "\(status)")
        #expect(!FileManager.default.fileExists(atPath: home + "/.var"))
    }

    @Test("--flatpak-app needs --flatpak, and names an app id")
    func options() {
        let without = DaemonProcess.run([
            "run", "--flatpak-app", "org.example.Notes", "--db", directory.file("x"),
        ])
        #expect(without.status == 64 && without.error.contains("need --flatpak"), "\(without.error)")
        let wrong = DaemonProcess.run([
            "run", "--flatpak", "--flatpak-app", "../../etc", "--db", directory.file("x"),
        ])
        #expect(wrong.status == 64 && wrong.error.contains("not a Flatpak app id"), "\(wrong.error)")
    }
}
