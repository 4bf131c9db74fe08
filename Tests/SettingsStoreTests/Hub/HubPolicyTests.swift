import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsStore
@testable import SettingsSync

extension HubReliability {
    @Suite(
        "PostgreSQL hub: fleet policies reach their machines, apply whole and are reported",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubPolicyTests {
        let directory = TemporaryDirectory()

        /// A hub with a policy administrator, a group role and its members' URLs.
        struct Fleet {
            let cluster: PostgresCluster
            let admin: String
            let group: String
            let members: [String]
            let outsider: String
            /// A policy name of this test's own: the hub is shared by the suite's tests.
            let policy: String
        }

        private func fleet(members count: Int = 2) throws -> Fleet {
            let cluster = try HubSyncTests.hub()
            let admin = try cluster.makeRole("padmin")
            try cluster.psql("GRANT settingsd_policy_admin TO \(admin.name)")
            let group = try cluster.makeRole("staff")
            try cluster.psql("ALTER ROLE \(group.name) NOLOGIN")
            let members = try (0..<count).map { _ in
                let member = try cluster.makeRole("member")
                try cluster.psql("GRANT \(group.name) TO \(member.name)")
                return cluster.conninfo(user: member.name, password: member.password)
            }
            let outsider = try cluster.makeRole("outsider")
            return Fleet(
                cluster: cluster, admin: cluster.conninfo(user: admin.name, password: admin.password),
                group: group.name, members: members,
                outsider: cluster.conninfo(user: outsider.name, password: outsider.password),
                policy: "desktop-\(group.name)")
        }

        private func document(_ keys: [String: (SettingValue, PolicyDocument.Level)]) -> PolicyDocument {
            PolicyDocument(keys: keys.mapValues { PolicyDocument.Entry(value: $0.0, level: $0.1) })
        }

        private func link(_ settings: Settings, _ url: String, polls: Bool = false) throws -> HubLink {
            try settings.sync(
                withHub: HubConfiguration(
                    url: url, pooling: polls ? .transaction : .session,
                    pollInterval: .milliseconds(50)...(.milliseconds(200))))
        }

        @Test(
            "a group's policy reaches its members and nobody else: mandatory refuses the user, recommended yields, removal leaves nothing"
        )
        func groupPolicyLifecycle() async throws {
            let fleet = try fleet()
            let alice = Settings(inMemoryWith: .init())
            let bob = Settings(inMemoryWith: .init())
            let stranger = Settings(inMemoryWith: .init())
            try alice.set("light", forKey: "ui.theme")
            try bob.set("Comic Sans", forKey: "ui.font")
            let links = try [link(alice, fleet.members[0]), link(bob, fleet.members[1], polls: true)]
            let strangerLink = try link(stranger, fleet.outsider)
            defer { (links + [strangerLink]).forEach { $0.stop() } }
            try await waitUntil(timeout: 30) {
                links.allSatisfy { $0.status.isConnected } && strangerLink.status.isConnected
            }

            let plan = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy,
                document: document([
                    "ui.theme": (.string("dark"), .mandatory), "ui.font": (.string("Inter"), .recommended),
                ]),
                targets: [fleet.group], dryRun: false)
            #expect(plan.revision == 1)
            #expect(plan.changes.map(\.key) == ["ui.font", "ui.theme"])
            try await waitUntil(timeout: 30) {
                alice.value(forKey: "ui.theme") == "dark" && bob.value(forKey: "ui.theme") == "dark"
            }
            // Mandatory wins over alice's own value and refuses her write; recommended yields to bob's.
            #expect(throws: SettingsError.self) { try alice.set("light", forKey: "ui.theme") }
            #expect(alice.storedValue(forKey: "ui.theme") == "light")
            #expect(alice.value(forKey: "ui.font") == "Inter")
            #expect(bob.value(forKey: "ui.font") == "Comic Sans")
            #expect(alice.source(ofKey: "ui.theme") == .mandatoryPolicy(name: fleet.policy, revision: 1))
            #expect(stranger.value(forKey: "ui.theme") == nil)
            #expect(stranger.fleetPolicy.isEmpty)

            _ = try HubPolicyAdministration.remove(url: fleet.admin, name: fleet.policy, dryRun: false)
            try await waitUntil(timeout: 30) { alice.fleetPolicy.isEmpty && bob.fleetPolicy.isEmpty }
            #expect(alice.value(forKey: "ui.theme") == "light")
            #expect(alice.value(forKey: "ui.font") == nil)
            #expect(bob.value(forKey: "ui.font") == "Comic Sans")
            try alice.set("solarized", forKey: "ui.theme")
        }

        @Test("revision 2 replaces revision 1 in one change announced with reason system")
        func revisionAppliesWhole() async throws {
            let fleet = try fleet(members: 1)
            let machine = Settings(inMemoryWith: .init())
            let machineLink = try link(machine, fleet.members[0])
            defer { machineLink.stop() }
            try await waitUntil(timeout: 30) { machineLink.status.isConnected }
            let first = document(["a": (.integer(1), .mandatory), "b": (.integer(1), .mandatory)])
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy, document: first, targets: [fleet.group], dryRun: false)
            try await waitUntil(timeout: 30) { machine.value(forKey: "b") == 1 }

            let changes = Mutex<[SettingsChange]>([])
            let token = machine.observe(.all) { change in changes.withLock { $0.append(change) } }
            defer { token.cancel() }
            let second = document(["a": (.integer(2), .mandatory), "c": (.integer(2), .recommended)])
            let dryRun = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy, document: second, targets: [fleet.group], dryRun: true)
            #expect(dryRun.revision == 2 && dryRun.isDryRun)
            #expect(dryRun.changes.map(\.key) == ["a", "b", "c"])
            #expect(dryRun.machines.map(\.replica) == [machine.replicaID])
            #expect(
                try HubPolicyAdministration.policies(url: fleet.admin, named: fleet.policy).first?.revision
                    == 1)
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy, document: second, targets: [fleet.group], dryRun: false)
            try await waitUntil(timeout: 30) { machine.value(forKey: "c") == 2 }
            // Observers hear of a commit just after its values are readable.
            try await waitUntil(timeout: 30) { changes.withLock { !$0.isEmpty } }
            let seen = changes.withLock { $0 }
            #expect(seen.count == 1, "\(seen)")
            #expect(seen.first?.reason == .system)
            #expect(seen.first?.changes.map(\.key).sorted() == ["a", "b", "c"])
            #expect(machine.value(forKey: "b") == nil)
            let history = try HubPolicyAdministration.history(url: fleet.admin, name: fleet.policy)
            #expect(history.map(\.revision) == [1, 2])
        }

        @Test(
            "a machine offline during a change applies it when it returns, and starts with the recorded policy without the hub"
        )
        func offlineMachine() async throws {
            let fleet = try fleet(members: 1)
            let file = directory.file("machine.sqlite")
            do {
                let machine = try Settings(path: file)
                var machineLink = try link(machine, fleet.members[0])
                try await waitUntil(timeout: 30) { machineLink.status.isConnected }
                _ = try HubPolicyAdministration.set(
                    url: fleet.admin, name: fleet.policy,
                    document: document(["ui.theme": (.string("dark"), .mandatory)]), targets: [fleet.group],
                    dryRun: false)
                try await waitUntil(timeout: 30) { machine.value(forKey: "ui.theme") == "dark" }
                machineLink.stop()
                _ = try HubPolicyAdministration.set(
                    url: fleet.admin, name: fleet.policy,
                    document: document(["ui.theme": (.string("contrast"), .mandatory)]),
                    targets: [fleet.group],
                    dryRun: false)
                #expect(machine.value(forKey: "ui.theme") == "dark")
                machineLink = try link(machine, fleet.members[0])
                try await waitUntil(timeout: 30) { machine.value(forKey: "ui.theme") == "contrast" }
                machineLink.stop()
            }

            // A restart with the hub unreachable: the recorded revision applies as the link starts.
            // (The stopped links' threads let go of the store as they end.)
            var reopened: Settings?
            try await waitUntil(timeout: 30) {
                reopened = try? Settings(path: file)
                return reopened != nil
            }
            let restarted = try #require(reopened)
            #expect(restarted.value(forKey: "ui.theme") == nil)
            let role = try #require(fleet.members[0].split(separator: " ").first { $0.hasPrefix("user=") })
            let offline = try link(restarted, "host=/nonexistent dbname=none \(role)")
            defer { offline.stop() }
            #expect(restarted.value(forKey: "ui.theme") == "contrast")
            #expect(restarted.source(ofKey: "ui.theme") == .mandatoryPolicy(name: fleet.policy, revision: 2))
        }

        @Test("only policy administrators write or read policies, and a machine reads only what reaches it")
        func administratorsOnly() throws {
            let fleet = try fleet(members: 1)
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy,
                document: document(["secret.proxy": (.string("p"), .mandatory)]),
                targets: [fleet.group], dryRun: false)
            #expect(throws: SettingsError.self) {
                _ = try HubPolicyAdministration.set(
                    url: fleet.members[0], name: fleet.policy, document: PolicyDocument(),
                    targets: [fleet.group],
                    dryRun: false)
            }
            let connection = try PostgresConnection(conninfo: fleet.outsider)
            #expect(throws: SettingsError.self) {
                try connection.execute(
                    "SELECT settingsd.set_policy('x', '{}', ARRAY['group:settingsd_user'], ARRAY[]::name[])")
            }
            #expect(throws: SettingsError.self) {
                try connection.execute("SELECT count(*) FROM settingsd.policies")
            }
            #expect(throws: SettingsError.self) {
                try connection.execute("SELECT count(*) FROM settingsd.policy_revisions")
            }
            let hub = try HubNamespace(connection: connection, namespace: nil, listens: false)
            #expect(try hub.policies(for: .random()).assignments.isEmpty)
            // Another namespace's machine cannot be asked for.
            #expect(throws: SettingsError.self) {
                try connection.execute(
                    "SELECT * FROM settingsd.machine_policies($1, $2)",
                    [.text(fleet.group), .bytes(ReplicaID.random().bytes)])
            }
        }

        @Test("the report's counts match what the machines hold: applied, failed, pending and not seen")
        func reportMatchesMachines() async throws {
            let fleet = try fleet(members: 3)
            let schemaFolder = directory.file("schemas")
            try FileManager.default.createDirectory(atPath: schemaFolder, withIntermediateDirectories: true)
            try
                #"{"format": "settingsd-schema", "version": 1, "keys": {"ui.size": {"type": "int", "max": 10}}}"#
                .write(toFile: schemaFolder + "/ui.json", atomically: true, encoding: .utf8)
            let strict = Settings(inMemoryWith: .init())
            strict.apply(try SettingsPolicy.load(schemaDirectories: [schemaFolder], systemDirectory: nil))
            let plain = Settings(inMemoryWith: .init())
            try plain.set(7, forKey: "ui.font.size")
            let links = try [link(strict, fleet.members[0]), link(plain, fleet.members[1])]
            defer { links.forEach { $0.stop() } }
            // The third member connects once, is seen, and goes away before the policy.
            let absent = Settings(inMemoryWith: .init())
            let absentLink = try link(absent, fleet.members[2])
            try await waitUntil(timeout: 30) {
                absentLink.status.isConnected && links.allSatisfy { $0.status.isConnected }
            }
            absentLink.stop()

            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy,
                document: document([
                    "ui.size": (.integer(50), .mandatory), "ui.font.size": (.integer(11), .recommended),
                ]), targets: [fleet.group], dryRun: false)
            try await waitUntil(timeout: 30) {
                let report = try HubPolicyReport.make(
                    url: fleet.admin, policy: fleet.policy, unseenAfter: .seconds(3_600))
                return report.summaries.first.map { $0.count(.applied) + $0.count(.failed) == 2 } ?? false
            }
            let pending = try #require(
                HubPolicyReport.make(url: fleet.admin, policy: fleet.policy, unseenAfter: .seconds(3_600))
                    .summaries.first)
            #expect(pending.rows.count == 3)
            #expect(pending.count(.applied) == 1)
            #expect(pending.count(.failed) == 1)
            #expect(pending.count(.pending) == 1)
            let failed = try #require(pending.rows.first { $0.state == .failed })
            #expect(failed.machine.replica == strict.replicaID)
            #expect(failed.refused.map(\.key) == ["ui.size"])
            #expect(strict.value(forKey: "ui.size") == nil)
            #expect(strict.value(forKey: "ui.font.size") == 11)
            let applied = try #require(pending.rows.first { $0.state == .applied })
            #expect(applied.overridden == ["ui.font.size"])
            let unseen = try #require(
                HubPolicyReport.make(url: fleet.admin, policy: fleet.policy, unseenAfter: .zero).summaries
                    .first)
            #expect(unseen.count(.notSeen) == 1)
        }

        @Test(
            "a machine target and a machine group reach that machine only, and win over the group at the same level"
        )
        func machineTargets() async throws {
            let fleet = try fleet(members: 2)
            let first = Settings(inMemoryWith: .init())
            let second = Settings(inMemoryWith: .init())
            let links = try [link(first, fleet.members[0]), link(second, fleet.members[1], polls: true)]
            defer { links.forEach { $0.stop() } }
            try await waitUntil(timeout: 30) { links.allSatisfy { $0.status.isConnected } }
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: fleet.policy,
                document: document(["ui.theme": (.string("group"), .mandatory)]),
                targets: [fleet.group], dryRun: false)
            _ = try HubPolicyAdministration.setGroup(
                url: fleet.admin, group: "lab-\(fleet.group)", machines: [second.replicaID.description])
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: "lab-\(fleet.policy)",
                document: document(["ui.theme": (.string("lab"), .mandatory)]),
                targets: ["machine-group:lab-\(fleet.group)"], dryRun: false)
            try await waitUntil(timeout: 30) {
                first.value(forKey: "ui.theme") == "group" && second.value(forKey: "ui.theme") == "lab"
            }
            _ = try HubPolicyAdministration.set(
                url: fleet.admin, name: "one-\(fleet.policy)",
                document: document(["ui.theme": (.string("mine"), .mandatory)]),
                targets: ["machine:\(first.replicaID)"], dryRun: false)
            try await waitUntil(timeout: 30) { first.value(forKey: "ui.theme") == "mine" }
            #expect(second.value(forKey: "ui.theme") == "lab")
        }

        @Test(
            "through PgBouncer in transaction pooling, a new revision reaches a polling machine",
            .enabled(
                if: PgBouncer.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] != nil)
        )
        func throughPgBouncer() async throws {
            let cluster = try HubSyncTests.hub()
            let admin = try cluster.makeRole("padmin")
            try cluster.psql("GRANT settingsd_policy_admin TO \(admin.name)")
            let member = try cluster.makeRole("pooled")
            let pooler = try PgBouncer(
                cluster: cluster, users: [member, (name: "postgres", password: "admin-pw")])
            let machine = Settings(inMemoryWith: .init())
            let machineLink = try link(
                machine, pooler.conninfo(user: member.name, password: member.password), polls: true)
            defer { machineLink.stop() }
            try await waitUntil(timeout: 30) {
                machineLink.status.isConnected && machineLink.status.mode == "poll"
            }
            let url = cluster.conninfo(user: admin.name, password: admin.password)
            _ = try HubPolicyAdministration.set(
                url: url, name: "pooled-\(member.name)",
                document: document(["ui.theme": (.string("dark"), .mandatory)]),
                targets: [member.name], dryRun: false)
            try await waitUntil(timeout: 30) { machine.value(forKey: "ui.theme") == "dark" }
        }
    }
}
