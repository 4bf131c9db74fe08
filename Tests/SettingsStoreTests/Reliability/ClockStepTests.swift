import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    /// Durations come from the monotonic clock: a wall clock stepped back or forward an hour
    /// while the daemon serves crashes nothing and delays nothing (idle closes, reconnects,
    /// statement time-outs), and versions still order.
    @Suite(
        "The wall clock stepped an hour either way while the daemon serves",
        .enabled(if: ClockShift.isAvailable, "needs a C compiler to build the clock preload"))
    struct ClockStepTests {
        let directory = TemporaryDirectory()

        @Test("status, writes and idle closes go on when the clock steps back and forward by an hour")
        func stepsWhileServing() async throws {
            let shift = try ClockShift(directory)
            let daemon = try DaemonProcess(
                directory, arguments: ["--idle-timeout", "1"], environment: shift.environment)
            #expect(daemon.cli("set", "before", "1").status == 0)
            for step: Int64 in [-3_600_000, 3_600_000, 0] {
                shift.set(milliseconds: step)
                let status = daemon.cli("status", "--json")
                #expect(status.status == 0, "step \(step): \(status.error)")
                #expect(daemon.process.isRunning)
                #expect(daemon.cli("set", "after", "\(step)").status == 0)
                #expect(daemon.cli("get", "after").output == "\(step)\n")
                if step < 0 {
                    // The preload works: the write is recorded an hour in the past.
                    let history = daemon.cli("history", "after", "--json").output
                    let hour = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-3_600)).prefix(
                        13)
                    #expect(history.contains("\"time\":\"\(hour)"), "\(history)")
                }
                // An idle client is closed a second after its last request, whatever the step.
                let idle = try daemon.client()
                try idle.request(.get(key: "before"))
                let started = Date()
                let closed: Bool
                do {
                    _ = try idle.receive()
                    closed = true
                } catch {
                    closed = error.code == .connectionLost
                }
                #expect(closed)
                #expect(Date().timeIntervalSince(started) < 3, "step \(step): idle close took too long")
            }
            let uptime = try #require(try daemon.status().uptimeSeconds)
            #expect(uptime >= 0 && uptime < 600, "uptime \(uptime)")
        }

        @Test("a peer link reconnects on time after the dialling daemon's clock stepped back an hour")
        func linksReconnect() async throws {
            let shift = try ClockShift(directory)
            let server = try DaemonProcess(directory, database: directory.file("server.sqlite"))
            let dialler = try DaemonProcess(
                directory, database: directory.file("dialler.sqlite"), arguments: ["--peer", server.socket],
                environment: shift.environment)
            #expect(server.cli("set", "first", "1").status == 0)
            try await waitUntil(timeout: 20) { dialler.cli("get", "first").output == "1\n" }
            #expect(server.terminate() == 0)
            shift.set(milliseconds: -3_600_000)
            try server.start()
            #expect(server.cli("set", "second", "2").status == 0)
            try await waitUntil(timeout: 20) { dialler.cli("get", "second").output == "2\n" }
            #expect(dialler.cli("sync", "--wait", "--timeout", "20").status == 0)
        }

        @Test(
            "a frozen hub statement still times out after the clock stepped back an hour",
            .enabled(
                if: PostgresCluster.testsEnabled && getuid() == 0,
                "needs PostgreSQL, and root to stop a server process"))
        func hubStatementsTimeOut() async throws {
            let cluster = try HubReliability.HubSyncTests.hub()
            let role = try cluster.makeRole("steps")
            let shift = try ClockShift(directory)
            let daemon = try DaemonProcess(
                directory,
                arguments: [
                    "--hub", cluster.conninfo(user: role.name, password: role.password),
                    "--hub-stall-timeout", "2",
                ],
                environment: shift.environment)
            #expect(daemon.cli("set", "before", "1").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT pid::bigint FROM pg_stat_activity WHERE usename = $1", [.text(role.name)])
            let frozen = (0..<rows.count).map { Int32(rows.int64($0, 0)) }
            for pid in frozen { kill(pid, SIGSTOP) }
            defer { for pid in frozen { kill(pid, SIGCONT) } }
            shift.set(milliseconds: -3_600_000)
            #expect(daemon.cli("set", "during", "2").status == 0)
            let started = Date()
            let wait = daemon.cli("sync", "--wait", "--timeout", "30")
            #expect(wait.status == 0, "\(wait.error)")
            #expect(Date().timeIntervalSince(started) < 20)
            #expect(daemon.process.isRunning)
        }
    }
}
