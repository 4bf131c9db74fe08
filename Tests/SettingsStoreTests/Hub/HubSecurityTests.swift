import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension HubReliability {
    @Suite(
        "PostgreSQL hub: roles, errors, ordering and limits",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubSecurityTests {
        @Test("two roles cannot see each other's namespaces; a shared group role works for both")
        func isolation() async throws {
            let cluster = try HubSyncTests.hub()
            let alice = try cluster.makeRole("alice")
            let bob = try cluster.makeRole("bob")
            let fleet = "fleet_\(UUID().uuidString.prefix(8).lowercased())"
            try cluster.psql("CREATE ROLE \(fleet) NOLOGIN; GRANT \(fleet) TO \(alice.name), \(bob.name)")
            let aliceURL = cluster.conninfo(user: alice.name, password: alice.password)
            let bobURL = cluster.conninfo(user: bob.name, password: bob.password)

            let alicePrivate = Settings(inMemoryWith: .init())
            let bobPrivate = Settings(inMemoryWith: .init())
            let links = [
                try alicePrivate.sync(withHub: HubConfiguration(url: aliceURL)),
                try bobPrivate.sync(withHub: HubConfiguration(url: bobURL)),
            ]
            defer { links.forEach { $0.stop() } }
            try alicePrivate.set("alice's", forKey: "secret")
            try await waitUntil {
                alicePrivate.hubs.first?.pendingUp == 0 && alicePrivate.hubs.first?.isConnected == true
            }
            let report = try HubAdministration.report(url: bobURL)
            #expect(!report.namespaces.contains { $0.name == alice.name })
            #expect(bobPrivate.value(forKey: "secret") == nil)

            // Bob asking for Alice's namespace is refused by PostgreSQL's view of roles.
            let intruder = Settings(inMemoryWith: .init())
            let refused = try intruder.sync(withHub: HubConfiguration(url: bobURL, namespace: alice.name))
            defer { refused.stop() }
            try await waitUntil {
                intruder.hubs.first?.lastError?.contains("may not use hub namespace") == true
            }

            // The shared group works for both.
            let (aliceFleet, bobFleet) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
            let fleetLinks = [
                try aliceFleet.sync(withHub: HubConfiguration(url: aliceURL, namespace: fleet)),
                try bobFleet.sync(withHub: HubConfiguration(url: bobURL, namespace: fleet)),
            ]
            defer { fleetLinks.forEach { $0.stop() } }
            try aliceFleet.set("shared", forKey: "fleet.key")
            try await waitUntil { bobFleet.value(forKey: "fleet.key") == "shared" }
        }

        @Test("settingsd's own role is no namespace: every hub user is a member, so none may use it")
        func reservedNamespace() throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("reserved")
            let connection = try PostgresConnection(
                conninfo: cluster.conninfo(user: role.name, password: role.password))
            let refusal = #expect(throws: SettingsError.self) {
                try HubNamespace(connection: connection, namespace: "settingsd_user", listens: false)
            }
            #expect(refusal?.code == .accessDenied)
            #expect(throws: SettingsError.self) {
                try connection.execute(
                    "SELECT settingsd.push('settingsd_user', NULL, '\\x00'::bytea, 1, ARRAY['k'], ARRAY['\\x00'::bytea], ARRAY[1::bigint], ARRAY['\\x00'::bytea], NULL, NULL, NULL)"
                )
            }
        }

        @Test(
            "a wrong password, a missing schema, a newer schema and a role never granted the hub each give one clear line"
        )
        func clearErrors() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("errs")
            let stranger = "stranger_\(UUID().uuidString.prefix(8).lowercased())"
            try cluster.psql("CREATE ROLE \(stranger) LOGIN PASSWORD 'pw-stranger'")
            let cases: [(url: String, expected: String)] = try [
                (cluster.conninfo(user: role.name, password: "wrong"), "password authentication failed"),
                (
                    cluster.conninfo(user: stranger, password: "pw-stranger"),
                    "GRANT settingsd_user TO \"\(stranger)\""
                ),
                (
                    cluster.conninfo(user: "postgres", database: try cluster.makeDatabase()),
                    "has no settingsd schema"
                ),
                (
                    {
                        let database = try cluster.makeDatabase()
                        try cluster.psql(
                            "CREATE SCHEMA settingsd; CREATE TABLE settingsd.meta (name text PRIMARY KEY, value text); "
                                + "INSERT INTO settingsd.meta VALUES ('schema_version', '99')",
                            database: database)
                        return cluster.conninfo(user: "postgres", database: database)
                    }(), "newer than this settingsd supports"
                ),
            ]
            for (url, expected) in cases {
                let settings = Settings(inMemoryWith: .init())
                let link = try settings.sync(withHub: HubConfiguration(url: url))
                try await waitUntil { settings.hubs.first?.lastError != nil }
                let error = try #require(settings.hubs.first?.lastError)
                link.stop()
                #expect(error.contains(expected), "\(error)")
                #expect(!error.contains("\n"))
                #expect(!error.contains(role.password))
                let cli = DaemonProcess.run(["hub", "status", url])
                #expect(cli.status == 1)
                #expect(cli.error.contains(expected), "\(cli.error)")
                #expect(cli.error.split(separator: "\n").count == 1, "\(cli.error)")
            }
            let garbage = DaemonProcess.run(["hub", "init", "host=/tmp port=notaport ="])
            #expect(garbage.status == 1)
            #expect(garbage.error.contains("cannot be parsed"), "\(garbage.error)")
        }

        @Test("concurrent pushers never make a reader skip a change")
        func orderedSequences() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("order")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let reader = Settings(inMemoryWith: .init())
            let readerLink = try reader.sync(withHub: HubConfiguration(url: url))
            defer { readerLink.stop() }
            let writers = (0..<4).map { _ in Settings(inMemoryWith: .init()) }
            let links = try writers.map { try $0.sync(withHub: HubConfiguration(url: url)) }
            defer { links.forEach { $0.stop() } }
            let group = ThreadGroup()
            for (index, writer) in writers.enumerated() {
                group.run {
                    for round in 0..<60 {
                        try? writer.transaction { transaction in
                            for item in 0..<(1 + round % 7) {
                                try transaction.set(round, forKey: "w\(index).r\(round).i\(item)")
                            }
                        }
                    }
                }
            }
            await group.wait()
            let perWriter = (0..<60).reduce(0) { $0 + 1 + $1 % 7 }
            try await waitUntil(timeout: 30) { reader.usage.keys == writers.count * perWriter }
            for index in writers.indices {
                #expect(reader.value(forKey: "w\(index).r59.i0") == 59)
            }
        }

        @Test("a key or value over the local limits coming down is refused as quotaViolation")
        func limitsOnArrival() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("limits")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let roomy = Settings(inMemoryWith: .init())
            let strict = Settings(inMemoryWith: SettingsConfiguration(limits: .iCloud))
            let violations = Mutex<[String]>([])
            let token = strict.observe(.all) { change in
                if change.reason == .quotaViolation { violations.withLock { $0 += change.keys } }
            }
            defer { token.cancel() }
            let links = [
                try roomy.sync(withHub: HubConfiguration(url: url)),
                try strict.sync(withHub: HubConfiguration(url: url)),
            ]
            defer { links.forEach { $0.stop() } }
            let longKey = String(repeating: "k", count: 100)
            try roomy.set("fits", forKey: "small")
            try roomy.set("too long a key for iCloud limits", forKey: longKey)
            // Within the desktop limit (1 MiB), over iCloud's (1,000,000 bytes).
            try roomy.set(String(repeating: "v", count: 1_010_000), forKey: "big")
            try await waitUntil {
                strict.value(forKey: "small") == "fits" && violations.withLock { $0.count } >= 2
            }
            #expect(strict.value(forKey: longKey) == nil)
            #expect(strict.value(forKey: "big") == nil)
            #expect(Set(violations.withLock { $0 }) == [longKey, "big"])
        }

        @Test("schemas hold on the hub path: local keys stay home, schema breaks are refused on arrival")
        func schemasThroughTheHub() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("schema")
            let url = cluster.conninfo(user: role.name, password: role.password)
            var configuration = SettingsConfiguration()
            configuration.policy = try SettingsPolicy.load(
                schemaDirectories: [exampleSchemaDirectory], systemDirectory: nil, extensions: .gnome)
            let governed = Settings(inMemoryWith: configuration)
            let free = Settings(inMemoryWith: .init())
            let violations = Mutex<[String]>([])
            let token = governed.observe(.all) { change in
                if change.reason == .schemaViolation { violations.withLock { $0 += change.keys } }
            }
            defer { token.cancel() }
            let links = [
                try governed.sync(withHub: HubConfiguration(url: url)),
                try free.sync(withHub: HubConfiguration(url: url)),
            ]
            defer { links.forEach { $0.stop() } }
            try governed.set(["w": 800], forKey: "window.main")
            try governed.set("dark", forKey: "ui.theme")
            try free.set("neon", forKey: "ui.theme.accent")
            try free.set(3.0, forKey: "audio.volume")
            try await waitUntil { free.value(forKey: "ui.theme") == "dark" }
            try await waitUntil { violations.withLock { $0 } == ["audio.volume"] }
            #expect(free.entry(forKey: "window.main") == nil)
            #expect(governed.value(forKey: "audio.volume") == 0.5)
            #expect(governed.value(forKey: "ui.theme.accent") == "neon")
        }
    }
}
