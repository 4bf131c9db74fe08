import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Another local user who makes /tmp/settingsd-<uid> first cannot pose as the daemon")
    struct ImpostorTests {
        /// A fake settingsd, run as `attacker` on `socket`: it answers every hello and records
        /// every byte it receives in `record`.
        private static func impostor(socket: String, record: String) -> [String] {
            [
                "-c",
                """
                import os, socket, threading
                listener = socket.socket(socket.AF_UNIX)
                listener.bind(\"\(socket)\")
                os.chmod(\"\(socket)\", 0o666)
                listener.listen(16)
                def talk(connection):
                    while True:
                        data = connection.recv(65536)
                        if not data:
                            return
                        with open(\"\(record)\", "ab") as out:
                            out.write(data)
                        for line in data.split(b"\\n"):
                            if b'"hello"' in line:
                                connection.sendall(b'{"id":0,"ok":true,"version":2,"replica":"00000000-0000-0000-0000-000000000001","server":"settingsd 0.1.0","roles":["client","replica"]}\\n')
                            elif line.strip():
                                connection.sendall(b'{"id":1,"ok":true,"sequence":1,"value":"forged"}\\n')
                while True:
                    connection, _ = listener.accept()
                    threading.Thread(target=talk, args=(connection,), daemon=True).start()
                """,
            ]
        }

        @Test(
            "the CLI, the Python client and the daemon skip a squatted socket folder, refuse a socket there by name, and send it nothing",
            .enabled(if: SystemUser.isAvailable, "needs root, useradd and setpriv"))
        func squattedFolder() async throws {
            let victim = try SystemUser()
            let attacker = try SystemUser()
            let home = "/tmp/sdt-home-\(UUID().uuidString.prefix(8))"
            let squat = "/tmp/settingsd-\(victim.uid)"
            let records = "/tmp/sdt-rec-\(UUID().uuidString.prefix(8))"
            defer {
                for path in [home, squat, records] { try? FileManager.default.removeItem(atPath: path) }
            }
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
            #expect(chown(home, uid_t(victim.uid), gid_t(victim.gid)) == 0)
            try FileManager.default.createDirectory(atPath: records, withIntermediateDirectories: false)
            #expect(chmod(records, 0o777) == 0)
            // The attacker's folder and fake daemon, where the victim's tools looked by default.
            #expect(attacker.run("/bin/mkdir", ["-m", "0711", squat]).status == 0)
            let record = records + "/received"
            let fake = try attacker.start(
                "/usr/bin/python3", Self.impostor(socket: squat + "/settingsd.sock", record: record))
            defer { fake.kill() }
            try await waitUntil(timeout: 10) {
                FileManager.default.fileExists(atPath: squat + "/settingsd.sock")
            }

            let environment = ["HOME": home, "PATH": "/usr/bin:/bin", "PYTHONPATH": pythonClientPath]
            func victimCLI(_ arguments: String...) -> CLIResult {
                victim.run(SettingsdBinary.path, arguments, environment: environment)
            }
            // No daemon of the victim's yet: the default path is the fallback, not the squat.
            let missing = victimCLI("set", "api.token", "s3cret")
            #expect(missing.status == 1)
            #expect(
                missing.error.contains(home + "/.local/state/settingsd/settingsd.sock"), "\(missing.error)")
            // Named, the squatted socket is connected to and refused before anything is sent.
            let named = victimCLI("set", "api.token", "s3cret", "--socket", squat + "/settingsd.sock")
            #expect(named.status == 1)
            #expect(named.error.contains("runs as uid \(attacker.uid)"), "\(named.error)")
            let python = victim.run(
                "/usr/bin/python3",
                [
                    "-c",
                    "import sys\nfrom settingsd_client import Client, SettingsdError\ntry:\n    Client(sys.argv[1]).set('mail.password', 'hunter2')\nexcept SettingsdError as error:\n    print(error.code)",
                    squat + "/settingsd.sock",
                ], environment: environment)
            #expect(python.output == "accessDenied\n", "\(python.output)\(python.error)")

            // The victim's own daemon is not locked out: it listens on the fallback, and says why.
            let daemon = try victim.start(
                SettingsdBinary.path, ["run", "--log-level", "warning"], environment: environment)
            defer { daemon.terminate() }
            try await waitUntil(timeout: 10) { victimCLI("status").status == 0 }
            #expect(victimCLI("set", "api.token", "s3cret").status == 0)
            #expect(victimCLI("get", "api.token").output == "s3cret\n")
            let pythonOwn = victim.run(
                "/usr/bin/python3",
                [
                    "-c",
                    "from settingsd_client import Client\nc = Client()\nc.set('mail.password', 'hunter2')\nprint(c.get('mail.password'))",
                ],
                environment: environment)
            #expect(pythonOwn.output == "hunter2\n", "\(pythonOwn.error)")
            let received = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            #expect(received.isEmpty, "the impostor received: \(received)")
        }
    }
}

/// The Python client's package folder, for `PYTHONPATH`.
let pythonClientPath: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("clients/python").path
}()
