import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Access control, per-connection limits, default paths and option spellings")
    struct AccessAndOptionsTests {
        let directory = TemporaryDirectory()

        /// Runs the CLI as user `uid` (the tests run as root and drop to it with setpriv).
        private static func run(as uid: Int, _ arguments: [String]) -> CLIResult {
            DaemonProcess.run(
                ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", SettingsdBinary.path] + arguments,
                through: "/usr/bin/setpriv")
        }

        private static let canSwitchUser =
            getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

        @Test(
            "--allow-uid lets that user in through a reachable socket; other users are refused by uid",
            .enabled(if: canSwitchUser, "needs root and setpriv to act as other users"))
        func allowedUser() throws {
            let folder = "/tmp/sdt-allow-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let daemon = try DaemonProcess(
                directory, socket: folder + "/settingsd.sock", arguments: ["--allow-uid", "65534"])
            #expect(daemon.cli("set", "shared", "yes").status == 0)

            let allowed = Self.run(as: 65534, ["get", "shared", "--socket", daemon.socket])
            #expect(allowed.output == "yes\n", "\(allowed.error)")
            let refused = Self.run(as: 65533, ["get", "shared", "--socket", daemon.socket])
            #expect(refused.status == 1)
            #expect(refused.error.contains("uid 65533 may not use this settingsd"), "\(refused.error)")
            let socketMode =
                try FileManager.default.attributesOfItem(atPath: daemon.socket)[.posixPermissions] as? Int
            #expect(socketMode == 0o666)
        }

        @Test(
            "without --allow-uid another user cannot even reach the socket",
            .enabled(if: canSwitchUser, "needs root and setpriv to act as other users"))
        func privateSocket() throws {
            let folder = "/tmp/sdt-private-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let daemon = try DaemonProcess(directory, socket: folder + "/settingsd.sock")
            let refused = Self.run(as: 65534, ["get", "k", "--socket", daemon.socket])
            #expect(refused.status == 1)
            #expect(refused.error.contains("not allowed to connect"), "\(refused.error)")
        }

        @Test("a connection holds at most maximumWatchesPerConnection watches; unwatching frees one")
        func watchLimit() throws {
            let settings = Settings(inMemoryWith: SettingsConfiguration())
            let socket = "/tmp/sdt-\(UUID().uuidString.prefix(12)).sock"
            let server = try SettingsServer(
                settings: settings,
                configuration: ServerConfiguration(socketPath: socket, maximumWatchesPerConnection: 2))
            try server.start()
            defer { server.stop() }
            let client = try BlockingClient(socketPath: socket, timeout: 10)
            let first = try client.request(.watch(filter: .keys(["a"])))
            try client.request(.watch(filter: .keys(["b"])))
            let error = #expect(throws: SettingsError.self) {
                try client.request(.watch(filter: .keys(["c"])))
            }
            #expect(error?.code == .tooManyItems)
            guard case .integer(let watch)? = first["watch"] else {
                Issue.record("no watch number in \(first)")
                return
            }
            try client.request(.unwatch(watch: watch))
            try client.request(.watch(filter: .keys(["c"])))
            // Another connection has its own allowance.
            let other = try BlockingClient(socketPath: socket, timeout: 10)
            try other.request(.watch(filter: .all))
        }

        @Test("import parts staged by many connections share one budget, which a closed connection returns")
        func stagingBudgetIsShared() async throws {
            let settings = Settings(inMemoryWith: SettingsConfiguration())
            let socket = "/tmp/sdt-\(UUID().uuidString.prefix(12)).sock"
            var configuration = ServerConfiguration(socketPath: socket)
            configuration.stagedImportLimit = 2 << 20
            let server = try SettingsServer(settings: settings, configuration: configuration)
            try server.start()
            defer { server.stop() }
            // About 0.5 MiB as counted: small entries cost far more than their bytes.
            func part(_ prefix: String) -> ExportDocument {
                ExportDocument(
                    values: Dictionary(
                        uniqueKeysWithValues: (0..<3_000).map { ("\(prefix).\($0)", .integer(Int64($0))) }))
            }
            var first: BlockingClient? = try BlockingClient(socketPath: socket, timeout: 10)
            for index in 0..<3 { try first?.request(.importPart(document: part("a\(index)"))) }
            let second = try BlockingClient(socketPath: socket, timeout: 10)
            let refused = #expect(throws: SettingsError.self) {
                try second.request(.importPart(document: part("b")))
            }
            #expect(refused?.code == .limitExceeded)
            #expect(refused?.message.contains("the daemon is staging") == true, "\(refused?.message ?? "")")
            first = nil
            try await waitUntil(timeout: 10) {
                do {
                    try second.request(.importPart(document: part("c")))
                    return true
                } catch {
                    return false
                }
            }
            let imported = try second.request(
                .import(document: part("d"), replace: false, replacingUnder: []))
            #expect(imported["imported"] == .integer(6_000))
        }

        @Test("default paths: SETTINGSD_*, then XDG folders, then home and /tmp; empty means unset")
        func defaultPaths() {
            let database = { (environment: [String: String]) in
                SettingsPaths.database(environment: { environment[$0] })
            }
            let socket = { (environment: [String: String]) in
                SettingsPaths.socket(environment: { environment[$0] }, uid: 1234)
            }
            #expect(database(["SETTINGSD_DB": "/d.sqlite", "XDG_DATA_HOME": "/x"]) == "/d.sqlite")
            #expect(database(["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/settingsd/settings.sqlite")
            #expect(
                database(["SETTINGSD_DB": "", "HOME": "/h"]) == "/h/.local/share/settingsd/settings.sqlite")
            #expect(database([:]).hasSuffix("/.local/share/settingsd/settings.sqlite"))
            #expect(socket(["SETTINGSD_SOCKET": "/s.sock", "XDG_RUNTIME_DIR": "/r"]) == "/s.sock")
            #expect(socket(["XDG_RUNTIME_DIR": "/r"]) == "/r/settingsd/settingsd.sock")
            #expect(socket(["XDG_RUNTIME_DIR": ""]) == "/tmp/settingsd-1234/settingsd.sock")
        }

        @Test("the CLI finds the daemon through the environment alone")
        func environmentSocket() throws {
            let daemon = try DaemonProcess(directory)
            #expect(daemon.cli("set", "k", "v").status == 0)
            let result = DaemonProcess.run(["get", "k"], environment: ["SETTINGSD_SOCKET": daemon.socket])
            #expect(result.output == "v\n", "\(result.error)")
        }

        @Test("--option=value means --option value; `--` ends options")
        func optionSpellings() throws {
            let daemon = try DaemonProcess(directory)
            let socket = "--socket=\(daemon.socket)"
            #expect(DaemonProcess.run(["set", socket, "n", "5", "--type=int"]).status == 0)
            #expect(DaemonProcess.run(["get", socket, "n", "--json"]).output == "5\n")
            #expect(DaemonProcess.run(["set", socket, "--", "--type=int", "text"]).status == 0)
            #expect(DaemonProcess.run(["get", socket, "--", "--type=int"]).output == "text\n")
            let empty = DaemonProcess.run(["get", "--socket=", "n"])
            #expect(empty.status == 64, "\(empty.error)")
            let unknown = DaemonProcess.run(["get", socket, "--bogus=1", "n"])
            #expect(unknown.status == 64)
            #expect(unknown.error.contains("--bogus"))
        }
    }
}
