import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension HubReliability {
    @Suite(
        "PostgreSQL hub: a frozen server process stalls nothing and fools no sync --wait",
        .enabled(
            if: PostgresCluster.testsEnabled && getuid() == 0,
            "needs PostgreSQL, and root to stop a server process")
    )
    struct HubStallTests {
        let directory = TemporaryDirectory()

        /// The server processes serving `role` (its daemon's hub connection).
        private func backends(_ cluster: PostgresCluster, role: String) throws -> [Int32] {
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT pid::bigint FROM pg_stat_activity WHERE usename = $1", [.text(role)])
            return (0..<rows.count).map { Int32(rows.int64($0, 0)) }
        }

        @Test(
            "sync --wait fails while the hub's server process is frozen; the link calls it stalled and reconnects"
        )
        func frozenBackend() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("frozen")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let daemon = try DaemonProcess(
                directory, arguments: ["--hub", url, "--hub-stall-timeout", "2"])
            #expect(daemon.cli("set", "before", "1").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            let frozen = try backends(cluster, role: role.name)
            #expect(frozen.count == 1)
            for pid in frozen { kill(pid, SIGSTOP) }
            defer { for pid in frozen { kill(pid, SIGCONT) } }

            #expect(daemon.cli("set", "during", "2").status == 0)
            let early = daemon.cli("sync", "--wait", "--timeout", "1")
            #expect(early.status != 0, "sync --wait passed while the hub was frozen: \(early.error)")
            // The link gives up on the frozen process after 2 s and syncs over a new one.
            let late = daemon.cli("sync", "--wait", "--timeout", "30")
            #expect(late.status == 0, "\(late.error)")
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT count(*)::bigint FROM settingsd.entries WHERE namespace = $1 AND key = 'during'",
                [.text(role.name)])
            #expect(rows.int64(0, 0) == 1)
            // The status says why the link reconnected.
            let status = try daemon.status()
            #expect(status.hubs.first?.isConnected == true)
        }
    }
}
