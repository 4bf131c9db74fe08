import Foundation
import PostgresFixture
import Testing

@testable import SettingsStore
@testable import SettingsSync

extension HubReliability {
    @Suite(
        "Sealed hub: no key name or value reaches PostgreSQL, and tampered rows are refused",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct SealedHubTests {
        static func hub() throws -> PostgresCluster {
            let cluster = try PostgresCluster.shared()
            _ = try HubAdministration.initialize(url: cluster.conninfo())
            return cluster
        }

        /// Writes `pairs` to `settings` in one transaction.
        static func put(_ settings: Settings, _ pairs: [(String, SettingValue)]) throws {
            try settings.transaction { transaction in
                for (key, value) in pairs { try transaction.set(value, forKey: key) }
            }
        }

        static func configuration(_ url: String, _ keyring: SyncKeyring?) -> HubConfiguration {
            var configuration = HubConfiguration(url: url)
            configuration.keyring = keyring
            return configuration
        }

        @Test(
            "two machines with one key converge through a sealed namespace; a dump of the hub holds no name or value"
        )
        func convergeAndDumpHoldsNoMarker() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("sealed")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let keyring = SyncKeyring(current: .random())
            let marker = "mk\(UInt32.random(in: 0...UInt32.max))"
            let ana = Settings(inMemoryWith: .init())
            try Self.put(
                ana, (0..<1_000).map { ("\(marker).name\($0)", SettingValue.string("\(marker)-value-\($0)")) }
            )
            let ben = Settings(inMemoryWith: .init())
            try ben.set(SettingValue.string("\(marker)-from-ben"), forKey: "\(marker).ben")
            let anaLink = try ana.sync(withHub: Self.configuration(url, keyring))
            defer { anaLink.stop() }
            try await waitUntil {
                anaLink.status.sealedUnder == keyring.keyID && anaLink.status.pendingUp == 0
            }
            let benLink = try ben.sync(withHub: Self.configuration(url, keyring))
            defer { benLink.stop() }
            try await waitUntil(timeout: 60) {
                ben.value(forKey: "\(marker).name999") != nil && ana.value(forKey: "\(marker).ben") != nil
            }
            try await waitUntil(timeout: 60) { ana.digest == ben.digest }
            #expect(ben.value(forKey: "\(marker).name7") == .string("\(marker)-value-7"))

            let directory = TemporaryDirectory()
            try cluster.dumpHub(to: directory.file("hub.sql"), plain: true)
            let dump = try String(contentsOfFile: directory.file("hub.sql"), encoding: .utf8)
            #expect(dump.contains("settingsd.entries"), "the dump holds the entries table")
            #expect(!dump.contains(marker), "a name or value reached the hub in the clear")
            #expect(!dump.contains("name999"))
        }

        @Test(
            "a flipped byte, a row moved to another key, a replay at a newer version and another namespace's row are refused, reported, never applied"
        )
        func tamperedRowsAreRefused() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("tamper")
            let other = try cluster.makeRole("tamperb")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let keyring = SyncKeyring(current: .random())
            let ana = Settings(inMemoryWith: .init())
            try Self.put(
                ana,
                [
                    ("flip", .string("a")), ("source", .string("b")), ("moved", .string("c")),
                    ("replay", .string("d")),
                ]
                    + (0..<20).map { ("plain\($0)", SettingValue.integer(Int64($0))) })
            let anaLink = try ana.sync(withHub: Self.configuration(url, keyring))
            try await waitUntil { anaLink.status.sealedUnder != nil && anaLink.status.pendingUp == 0 }
            // Another namespace sealed under the same key, whose row is copied over.
            let elsewhere = Settings(inMemoryWith: .init())
            try elsewhere.set(SettingValue.string("theirs"), forKey: "intruder")
            let elsewhereLink = try elsewhere.sync(
                withHub: Self.configuration(
                    cluster.conninfo(user: other.name, password: other.password), keyring))
            try await waitUntil {
                elsewhereLink.status.sealedUnder != nil && elsewhereLink.status.pendingUp == 0
            }
            elsewhereLink.stop()
            anaLink.stop()

            let target = try HubNamespace(
                connection: PostgresConnection(conninfo: url), namespace: nil, listens: false
            ).sealTarget
            let sealer = keyring.sealer(for: target)
            let otherSealer = keyring.sealer(
                for: try HubNamespace(
                    connection: PostgresConnection(
                        conninfo: cluster.conninfo(user: other.name, password: other.password)),
                    namespace: nil, listens: false
                ).sealTarget)
            let ns = role.name
            func id(_ key: String) -> String { sealer.keyID(for: key) }
            try cluster.psql(
                """
                UPDATE settingsd.entries SET value = set_byte(value, 45, get_byte(value, 45) # 1)
                    WHERE namespace = '\(ns)' AND key = '\(id("flip"))';
                UPDATE settingsd.entries AS d SET value = s.value, hlc = s.hlc, replica = s.replica
                    FROM settingsd.entries AS s
                    WHERE d.namespace = '\(ns)' AND d.key = '\(id("moved"))' AND s.namespace = '\(ns)' AND s.key = '\(id("source"))';
                UPDATE settingsd.entries SET hlc = hlc + 1000000000
                    WHERE namespace = '\(ns)' AND key = '\(id("replay"))';
                UPDATE settingsd.namespaces SET last_seq = last_seq + 1 WHERE namespace = '\(ns)';
                INSERT INTO settingsd.entries (namespace, key, value, hlc, replica, hub_seq, pushed_by)
                    SELECT '\(ns)', key, value, hlc, replica,
                        (SELECT last_seq FROM settingsd.namespaces WHERE namespace = '\(ns)'), pushed_by
                    FROM settingsd.entries WHERE namespace = '\(other.name)' AND key = '\(otherSealer.keyID(for: "intruder"))';
                """)

            let ben = Settings(inMemoryWith: .init())
            let benLink = try ben.sync(withHub: Self.configuration(url, keyring))
            defer { benLink.stop() }
            try await waitUntil {
                ben.value(forKey: "plain19") != nil && benLink.status.sealedRowsRefused >= 4
                    && benLink.status.agreement.hasPrefix("agreed")
            }
            #expect(benLink.status.sealedRowsRefused == 4, "each refused row counted once")
            #expect(benLink.status.lastSealRefusal != nil)
            #expect(ben.value(forKey: "source") == .string("b"), "the other keys still sync")
            for key in ["flip", "moved", "replay", "intruder"] {
                #expect(ben.value(forKey: key) == nil, "\(key) was applied")
            }
            #expect(ben.keys().allSatisfy { !EntrySealer.isKeyID($0) }, "no key id became a key")

            // The machine that holds the values repairs what it can: rows at its own versions.
            let repairing = try ana.sync(withHub: Self.configuration(url, keyring))
            defer { repairing.stop() }
            try await waitUntil { repairing.status.isConnected }
            ana.replicator.verifyHubs()
            try await waitUntil(timeout: 60) {
                ben.value(forKey: "flip") == .string("a") && ben.value(forKey: "moved") == .string("c")
            }
        }

        @Test(
            "a machine with another key, or none, is refused and changes nothing; the hub refuses plain pushes too"
        )
        func wrongKeyIsRefused() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("wrongkey")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let keyring = SyncKeyring(current: .random())
            let ana = Settings(inMemoryWith: .init())
            try ana.set(SettingValue.string("secret"), forKey: "token")
            let anaLink = try ana.sync(withHub: Self.configuration(url, keyring))
            defer { anaLink.stop() }
            try await waitUntil { anaLink.status.sealedUnder != nil && anaLink.status.pendingUp == 0 }
            let admin = try PostgresConnection(conninfo: cluster.conninfo())
            func rows() throws -> Int64 {
                try admin.execute(
                    "SELECT count(*) FROM settingsd.entries WHERE namespace = $1", [.text(role.name)]
                )
                .int64(0, 0)
            }
            let before = try rows()
            for stranger in [SyncKeyring(current: .random()), nil] {
                let carl = Settings(inMemoryWith: .init())
                try carl.set(SettingValue.string("mine"), forKey: "carl.only")
                let link = try carl.sync(withHub: Self.configuration(url, stranger))
                try await waitUntil { link.status.lastError?.contains("end-to-end encrypted") == true }
                link.stop()
                #expect(carl.value(forKey: "token") == nil)
                #expect(carl.keys() == ["carl.only"])
            }
            #expect(try rows() == before, "a refused machine wrote nothing")
            // A plain push straight to the hub (an old build, a hand-made client) is refused by the hub.
            let plain = try HubNamespace(
                connection: PostgresConnection(conninfo: url), namespace: nil, listens: false)
            let writer = ReplicaID.random()
            #expect(throws: SettingsError.self) {
                try plain.push(
                    [
                        SettingEntry(
                            key: "clear", value: .string("text"),
                            version: SettingVersion(
                                timestamp: HybridTimestamp(milliseconds: 1, counter: 0), replica: writer),
                            sequence: 1)
                    ],
                    from: writer, through: 1)
            }
            #expect(try rows() == before)
        }

        @Test(
            "a rotation re-seals the namespace; a machine offline meanwhile is refused until it imports the key, then syncs what it wrote"
        )
        func rotationWithAMachineOffline() async throws {
            let cluster = try Self.hub()
            let role = try cluster.makeRole("rotate")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let old = SyncKeyring(current: .random())
            let ana = Settings(inMemoryWith: .init())
            let ben = Settings(inMemoryWith: .init())
            try ana.set(SettingValue.string("one"), forKey: "a")
            var anaLink = try ana.sync(withHub: Self.configuration(url, old))
            var benLink = try ben.sync(withHub: Self.configuration(url, old))
            try await waitUntil { ben.value(forKey: "a") == .string("one") }
            benLink.stop()
            try ben.set(SettingValue.string("written offline"), forKey: "b")
            anaLink.stop()

            let rotated = old.rotated()
            anaLink = try ana.sync(withHub: Self.configuration(url, rotated))
            defer { anaLink.stop() }
            try await waitUntil {
                anaLink.status.sealedUnder == rotated.keyID && anaLink.status.pendingUp == 0
            }
            let admin = try PostgresConnection(conninfo: cluster.conninfo())
            let stale = try admin.execute(
                "SELECT count(*) FROM settingsd.entries WHERE namespace = $1 AND substr(value, 2, 8) <> $2::bytea",
                [.text(role.name), .bytes(rotated.current.idBytes)]
            ).int64(0, 0)
            #expect(stale == 0, "every row is sealed under the new key")

            benLink = try ben.sync(withHub: Self.configuration(url, old))
            try await waitUntil { benLink.status.lastError?.contains(rotated.keyID) == true }
            benLink.stop()
            #expect(ana.value(forKey: "b") == nil, "nothing of the machine that missed the rotation landed")

            benLink = try ben.sync(withHub: Self.configuration(url, old.importing(rotated.current)))
            defer { benLink.stop() }
            try await waitUntil { ana.value(forKey: "b") == .string("written offline") }
            #expect(benLink.status.sealedUnder == rotated.keyID)
        }
    }
}
