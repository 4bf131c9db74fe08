import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

#if canImport(Glibc)
    import Glibc
#endif

/// Sync keys kept in the Secret Service: a real GNOME Keyring on a private session bus.
@Suite(
    "Sync keys in the Secret Service: GNOME Keyring when the session has one, the 0600 file otherwise",
    .enabled(if: DconfSession.isAvailable, "needs dbus"),
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/secret-tool"),
        "needs gnome-keyring and libsecret-tools")
)
struct SecretServiceKeysTests {
    /// A private session with GNOME Keyring's secrets component, its login keyring unlocked.
    final class KeyringSession {
        let session: DconfSession
        private let keyring: Process

        init(_ directory: TemporaryDirectory) async throws {
            session = try await DconfSession(directory)
            var environment = session.environment
            environment["XDG_DATA_HOME"] = directory.file("data")
            try FileManager.default.createDirectory(
                atPath: directory.file("data"), withIntermediateDirectories: true)
            keyring = Process()
            keyring.executableURL = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")
            keyring.arguments = ["--foreground", "--components=secrets", "--unlock"]
            keyring.environment = environment
            let input = Pipe()
            keyring.standardInput = input
            keyring.standardOutput = FileHandle.nullDevice
            keyring.standardError = FileHandle.nullDevice
            try keyring.run()
            input.fileHandleForWriting.write(Data("login password".utf8))
            try input.fileHandleForWriting.close()
            let probe = session
            try await waitUntil {
                probe.run("/usr/bin/secret-tool", ["store", "--label=probe", "probe", "1"], input: "x").status
                    == 0
            }
        }

        deinit {
            if keyring.isRunning {
                kill(keyring.processIdentifier, SIGKILL)
                keyring.waitUntilExit()
            }
        }

        func settingsd(_ arguments: String..., input: String? = nil) -> CLIResult {
            session.run(SettingsdBinary.path, arguments, input: input)
        }
    }

    @Test(
        "keys init keeps the key in the session's keyring and writes no file; show, export, rotate and the daemon find it there"
    )
    func keptInTheKeyring() async throws {
        let directory = TemporaryDirectory()
        let keyring = try await KeyringSession(directory)
        let made = keyring.settingsd("keys", "init")
        #expect(made.status == 0, "\(made.error)")
        #expect(made.error.contains("the Secret Service"), "\(made.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("config/settingsd/sync-key")))
        let shown = keyring.settingsd("keys", "show")
        #expect(shown.output.contains("kept in: the Secret Service"), "\(shown.output)")
        let id = try #require(shown.output.split(separator: "\n").first?.split(separator: " ").last)
        // What the keyring holds is the key file's format, under settingsd's attributes.
        let secret = keyring.session.run(
            "/usr/bin/secret-tool", ["lookup", "application", "settingsd", "user", String(getuid())])
        #expect(secret.output.contains(#""settingsd":"sync-keys""#), "\(secret.output) \(secret.error)")
        #expect(keyring.settingsd("keys", "export").output.hasPrefix("SDK1-"))

        let rotated = keyring.settingsd("keys", "rotate")
        #expect(rotated.status == 0, "\(rotated.error)")
        let after = keyring.settingsd("keys", "show").output
        #expect(after.contains("previous keys: \(id)"), "\(after)")

        let daemon = try DaemonProcess(
            directory, database: directory.file("store.sqlite"), environment: keyring.session.environment)
        let status = daemon.cli("status").output
        #expect(status.contains("kept in the Secret Service"), "\(status)")
    }

    @Test(
        "without a Secret Service on the bus the key is kept in the 0600 file; one asked for by name is an error"
    )
    func fileWithoutService() async throws {
        let directory = TemporaryDirectory()
        let session = try await DconfSession(directory)
        let made = session.run(SettingsdBinary.path, ["keys", "init"])
        #expect(made.status == 0, "\(made.error)")
        var info = stat()
        #expect(stat(directory.file("config/settingsd/sync-key"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(session.run(SettingsdBinary.path, ["keys", "show"]).output.contains("kept in: the file"))

        var environment = session.environment
        environment["SETTINGSD_SYNC_KEY_STORE"] = "secret-service"
        let refused = DaemonProcess.run(["keys", "show"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.error.contains("Secret Service"), "\(refused.error)")
    }
}
