import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("A local user who floods the daemon with connections cannot crash it or lock its owner out")
    struct DescriptorFloodTests {
        let directory = TemporaryDirectory()

        /// A loop of connects and closes on `socket` for `seconds`, in Python (another user's
        /// program, not ours).
        private static func flooder(_ socket: String, seconds: Double) -> [String] {
            [
                "-c",
                """
                import socket, time
                end = time.monotonic() + \(seconds)
                while time.monotonic() < end:
                    s = socket.socket(socket.AF_UNIX)
                    try:
                        s.connect(\"\(socket)\")
                    except OSError:
                        pass
                    s.close()
                """,
            ]
        }

        @Test(
            "a refused uid connecting in a loop: the owner's 40 commands all succeed, the daemon lives, the log stays short",
            .enabled(if: SystemUser.isAvailable, "needs root, useradd and setpriv"))
        func refusedUserFloods() async throws {
            let intruder = try SystemUser()
            let log = directory.file("daemon.log")
            // --allow-uid makes the socket 0666: anyone on the machine may connect.
            let daemon = try DaemonProcess(
                directory, arguments: ["--allow-uid", "65534"], openFiles: 256,
                logFile: log)
            #expect(daemon.cli("set", "owner.key", "mine").status == 0)
            let flooders = try (0..<2).map { _ in
                try intruder.start("/usr/bin/python3", Self.flooder(daemon.socket, seconds: 4))
            }
            defer { for flooder in flooders where flooder.isRunning { flooder.terminate() } }
            try await Task.sleep(for: .milliseconds(500))
            var failures: [String] = []
            for _ in 0..<40 {
                let result = daemon.cli("get", "owner.key")
                if result.output != "mine\n" { failures.append(result.error) }
            }
            #expect(failures.isEmpty, "\(failures.count) of 40 failed: \(failures.prefix(3))")
            for flooder in flooders { flooder.waitUntilExit() }
            #expect(daemon.process.isRunning)
            #expect(daemon.cli("get", "owner.key").output == "mine\n")
            let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            let refusals = lines.filter { $0.contains("uid \(intruder.uid)") }
            #expect(!refusals.isEmpty, "the refusals were not logged at all")
            #expect(refusals.count <= 3, "\(refusals.count) log lines about the intruder")
        }

        @Test(
            "an allowed user who opens more connections than descriptors gets half of them at most; the owner is served and the daemon lives",
            .enabled(if: SystemUser.isAvailable, "needs root, useradd and setpriv"))
        func allowedUserHoardsConnections() async throws {
            let hoarder = try SystemUser()
            let daemon = try DaemonProcess(
                directory, arguments: ["--allow-uid", "\(hoarder.uid)"], openFiles: 128)
            let script = """
                import socket, time
                held = []
                for _ in range(400):
                    s = socket.socket(socket.AF_UNIX)
                    try:
                        s.connect(\"\(daemon.socket)\")
                        held.append(s)
                    except OSError:
                        pass
                time.sleep(4)
                """
            let hoarding = try hoarder.start("/usr/bin/python3", ["-c", script])
            defer { if hoarding.isRunning { hoarding.terminate() } }
            try await Task.sleep(for: .seconds(1))
            let client = try daemon.client()
            try client.request(.set(key: "served", value: "yes"))
            #expect(daemon.process.isRunning)
            hoarding.waitUntilExit()
            #expect(daemon.cli("get", "served").output == "yes\n")
        }
    }
}
