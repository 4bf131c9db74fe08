import Foundation
import Testing

@testable import PostgresFixture
@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Replica names: machines are named in status, history and the hub, not by ids alone")
    struct ReplicaNameTests {
        @Test(
            "two daemons named with --name know each other's names: status names the peer, history the writer"
        )
        func daemonsNameEachOther() async throws {
            let directory = TemporaryDirectory()
            let desk = try DaemonProcess(
                directory, database: directory.file("a.sqlite"), arguments: ["--name", "desk"])
            let laptop = try DaemonProcess(
                directory, database: directory.file("b.sqlite"),
                arguments: ["--name", "laptop", "--peer", desk.socket])
            #expect(desk.cli("set", "ui.theme", "dark").status == 0)
            try await waitUntil { laptop.cli("get", "ui.theme").output == "dark\n" }
            let status = laptop.cli("status").output
            #expect(status.contains("name: laptop"), "\(status)")
            #expect(status.contains("peer desk ("), "\(status)")
            let history = laptop.cli("history", "ui.theme").output
            #expect(history.contains("from desk ("), "\(history)")
            try await waitUntil { try desk.status().names.values.contains("laptop") }
            let json = try laptop.status()
            #expect(json.names[json.replica] == "laptop")
        }

        @Test("without --name a daemon goes by its host name; a name with control characters is cleaned")
        func defaultNameIsTheHostName() throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            let status = try daemon.status()
            #expect(status.names[status.replica] == SettingsDaemon.hostName())
            let settings = Settings(inMemoryWith: .init())
            settings.setName("  kitchen\u{7}pc \n", ofReplica: settings.replicaID)
            #expect(settings.replicaName == "kitchenpc")
            settings.setName(String(repeating: "x", count: 100), ofReplica: settings.replicaID)
            #expect(settings.replicaName?.count == Settings.maximumReplicaNameLength)
        }

        @Test(
            "machines through a hub learn each other's names; hub status lists them",
            .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed")
        )
        func namesThroughTheHub() async throws {
            let cluster = try PostgresCluster.shared()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            let role = try cluster.makeRole("named")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let (desk, laptop) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            desk.setName("desk", ofReplica: desk.replicaID)
            laptop.setName("laptop", ofReplica: laptop.replicaID)
            let deskLink = try desk.sync(withHub: HubConfiguration(url: url))
            defer { deskLink.stop() }
            try await waitUntil { desk.hubs.first?.isConnected == true }
            let laptopLink = try laptop.sync(withHub: HubConfiguration(url: url))
            defer { laptopLink.stop() }
            try desk.set("dark", forKey: "ui.theme")
            try await waitUntil { laptop.value(forKey: "ui.theme") == "dark" }
            #expect(laptop.name(ofReplica: desk.replicaID) == "desk")
            #expect(try laptop.history(for: "ui.theme").first?.originName == "desk")
            let report = try HubAdministration.report(url: url)
            // The desk pushed, so the hub lists it, by its name.
            #expect(report.replicas.first { $0.replica == desk.replicaID }?.name == "desk")
        }
    }
}

extension Reliability.ReplicaNameTests {
    @Test("an app's store with no name of its own is known to the daemon by its program's name")
    func appStoreGoesByItsProgram() async throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        let app = Settings(inMemoryWith: .init())
        let replicator = Replicator(settings: app)
        let link = replicator.sync(with: daemon.socket)
        defer { link.stop() }
        try await waitUntil { try daemon.status().names[app.replicaID] != nil }
        let program = try #require(ChangeActor.current.executable?.split(separator: "/").last)
        #expect(try daemon.status().names[app.replicaID] == String(program))
    }

    @Test(
        "hub init says what it did on standard output",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed")
    )
    func hubInitReportsOnStandardOutput() throws {
        let cluster = try PostgresCluster.shared()
        let result = DaemonProcess.run(["hub", "init", cluster.conninfo()])
        #expect(
            result.status == 0 && result.output.hasPrefix("the hub schema is"),
            "\(result.output)\(result.error)")
        #expect(result.error.isEmpty)
    }
}
