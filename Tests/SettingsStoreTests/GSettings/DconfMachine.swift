import Foundation
import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// One "machine" for the dconf bridge tests: a private session (`DconfSession`) and a daemon in
/// it mirroring `/org/gnome/`, typed by the installed GSettings schemas.
final class DconfMachine {
    let session: DconfSession
    let database: String
    private let arguments: [String]
    /// Variables added to the session's environment for the daemon.
    private let variables: [String: String]
    private(set) var daemon: DaemonProcess?

    /// A machine in a folder of its own, its daemon started; `profile` is a dconf profile's text.
    init(
        _ name: String, hub: String? = nil, profile: String? = nil, arguments extra: [String] = [],
        environment variables: [String: String] = [:], starting: Bool = true
    ) async throws {
        let folder = TemporaryDirectory("\(name)-\(UUID().uuidString.prefix(6))")
        session = try await DconfSession(folder, profile: profile)
        database = folder.file("settings.db")
        arguments =
            ["--dconf", "/org/gnome/", "--schemas", "/usr/share/glib-2.0/schemas"]
            + (hub.map { ["--hub", $0] } ?? []) + extra
        self.variables = variables
        if starting { try start() }
    }

    /// Starts the daemon (again).
    func start() throws {
        daemon = try DaemonProcess(
            session.directory, database: database, arguments: arguments,
            environment: session.environment.merging(variables) { $1 })
    }

    /// SIGKILL, as a crash would.
    func crash() {
        daemon?.kill()
        daemon = nil
    }

    /// SIGTERM.
    func stop() {
        _ = daemon?.terminate()
        daemon = nil
    }

    /// Runs the CLI against the daemon.
    func cli(_ arguments: String...) -> CLIResult {
        DaemonProcess.run(arguments + ["--socket", daemon?.socket ?? "/nonexistent"])
    }

    /// The value `settingsd get` prints when the store holds a value of its own for `key` (not
    /// a schema default), else nil.
    func get(_ key: String) -> String? {
        let described = cli("describe", key, "--json")
        guard described.status == 0, described.output.contains("\"source\":\"the user's value\"") else {
            return nil
        }
        let result = cli("get", key)
        return result.status == 0 ? result.output.trimmingCharacters(in: .newlines) : nil
    }

    /// What `gsettings get SCHEMA KEY` prints.
    func gsettings(get schema: String, _ key: String) -> String {
        session.gsettings("get", schema, key).output.trimmingCharacters(in: .newlines)
    }

    /// The bridge's status.
    func bridge() throws -> DaemonStatus.Dconf {
        guard let status = try daemon?.status().dconf else {
            throw SettingsError(.daemonNotRunning, "no dconf bridge in the daemon's status")
        }
        return status
    }
}
