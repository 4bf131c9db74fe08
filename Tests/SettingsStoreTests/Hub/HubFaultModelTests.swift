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
        "PostgreSQL hub: a seeded model of hub faults: nothing acknowledged is lost, nothing deleted returns, sync --wait never lies",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubFaultModelTests {
        let directory = TemporaryDirectory()

        /// What the run did to the hub and the daemons, and what they must hold: each key is
        /// written by one daemon only, so its last acknowledged write is its state.
        struct Model {
            var expected: [String: String?] = [:]
            var dumps: [String] = []
            var log: [String] = []

            var live: [String: String] { expected.compactMapValues { $0 } }
        }

        /// The hub's two servers: the primary and a standby streaming from it. The daemons' URL
        /// names both socket folders with `target_session_attrs=read-write`, so a failover is
        /// followed without a configuration change.
        final class Servers {
            var primary: PostgresCluster
            var standby: PostgresCluster

            init() throws {
                primary = try PostgresCluster.makePrivate()
                standby = try PostgresCluster.makePrivate()
                _ = try HubAdministration.initialize(url: primary.conninfo())
            }

            /// Stops the standby, lets `meanwhile` push to the primary alone, crashes the primary
            /// and promotes the standby, which misses those pushes; the old primary's folder then
            /// becomes the new standby.
            func failOver(meanwhile: () throws -> Void) throws {
                try standby.stop()
                try meanwhile()
                try primary.stop(immediate: true)
                try standby.start()
                try standby.promote()
                swap(&primary, &standby)
                try standby.becomeStandby(of: primary)
            }
        }

        private func daemon(_ name: String, url: String, database: String? = nil, namespace: String? = nil)
            throws -> DaemonProcess
        {
            try DaemonProcess(
                directory, database: database ?? directory.file("\(name).sqlite"),
                arguments: ["--hub", url, "--hub-stall-timeout", "3"]
                    + (namespace.map { ["--hub-namespace", $0] } ?? []))
        }

        /// Fills the file system holding `folder` to the last byte with a file of its own.
        private func fill(_ folder: String) -> String {
            let path = folder + "/filler"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer { close(descriptor) }
            let block = [UInt8](repeating: 0x5A, count: 4096)
            while block.withUnsafeBytes({ Foundation.write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            while block.withUnsafeBytes({ Foundation.write(descriptor, $0.baseAddress, 1) }) > 0 {}
            return path
        }

        /// Writes a few random sets and deletes of `writer`'s own keys; records the acknowledged ones.
        private func write(
            _ writer: String, on daemon: DaemonProcess, model: inout Model,
            using generator: inout SeededGenerator
        ) {
            for _ in 0..<Int.random(in: 2...5, using: &generator) {
                let key = "k.\(writer).\(Int.random(in: 0..<8, using: &generator))"
                if model.live[key] != nil, Int.random(in: 0..<4, using: &generator) == 0 {
                    if daemon.cli("delete", key).status == 0 { model.expected[key] = .some(nil) }
                } else {
                    let value = "v\(Int.random(in: 0..<1_000_000, using: &generator))"
                    if daemon.cli("set", key, value).status == 0 { model.expected[key] = value }
                }
            }
        }

        /// The `k.` keys `daemon` holds, with their values.
        private func held(_ daemon: DaemonProcess) throws -> [String: String] {
            guard case .object(let members) = try JSONValue.parse(daemon.cli("list", "k.", "--json").output)
            else {
                return [:]
            }
            return members.compactMapValues { if case .string(let text) = $0 { text } else { nil } }
        }

        /// The namespace's `k.` rows on the primary: values of live keys, and the tombstoned keys.
        private func hubState(_ servers: Servers, namespace: String) throws -> (
            live: [String: String], tombstones: Set<String>
        ) {
            let connection = try PostgresConnection(conninfo: servers.primary.conninfo(), defaults: [:])
            let rows = try connection.execute(
                "SELECT key, value FROM settingsd.entries WHERE namespace = $1 AND key LIKE 'k.%'",
                [.text(namespace)])
            var live: [String: String] = [:]
            var tombstones: Set<String> = []
            for row in 0..<rows.count {
                guard !rows.isNull(row, 1) else {
                    tombstones.insert(rows.text(row, 0))
                    continue
                }
                let value = rows.bytes(row, 1).withUnsafeBytes { try? SettingValue(decoding: $0) }
                if case .string(let text)? = value { live[rows.text(row, 0)] = text }
            }
            return (live, tombstones)
        }

        /// After a quiet period: `sync --wait` passes on every daemon, and then every daemon and
        /// the hub hold exactly the model.
        private func expectConverged(
            _ daemons: [DaemonProcess], _ servers: Servers, namespace: String, model: Model, seed: UInt64
        ) throws {
            let context = "seed \(seed), after \(model.log.joined(separator: ", "))"
            for daemon in daemons {
                let wait = daemon.cli("sync", "--wait", "--timeout", "60")
                #expect(wait.status == 0, "\(context): sync --wait failed: \(wait.output)\(wait.error)")
            }
            let expected = model.live
            for (index, daemon) in daemons.enumerated() {
                let got = try held(daemon)
                let wrong = Set(got.keys).union(expected.keys).filter { got[$0] != expected[$0] }
                #expect(wrong.isEmpty, "\(context): daemon \(index) differs on \(wrong.sorted())")
            }
            let hub = try hubState(servers, namespace: namespace)
            let wrong = Set(hub.live.keys).union(expected.keys).filter { hub.live[$0] != expected[$0] }
            #expect(wrong.isEmpty, "\(context): the hub differs on \(wrong.sorted())")
        }

        /// While the hub is not quiet, `sync --wait` may fail; when it passes, the daemon's own
        /// writes must all be on the hub.
        private func probeWait(
            _ daemon: DaemonProcess, writer: String, _ servers: Servers, namespace: String, model: Model,
            seed: UInt64, timeout: String = "1"
        ) throws {
            guard daemon.cli("sync", "--wait", "--timeout", timeout).status == 0 else { return }
            let hub = try hubState(servers, namespace: namespace)
            let own = model.live.filter { $0.key.hasPrefix("k.\(writer).") }
            let missing = own.filter { hub.live[$0.key] != $0.value }.map(\.key)
            let returned = model.expected.filter { $0.key.hasPrefix("k.\(writer).") && $0.value == nil }
                .map(\.key).filter { hub.live[$0] != nil }
            #expect(
                missing.isEmpty && returned.isEmpty,
                "seed \(seed): sync --wait passed on \(writer) while the hub lacked \(missing.sorted()) and held deleted \(returned.sorted()) (after \(model.log.joined(separator: ", ")))"
            )
        }

        @Test(
            "restores from earlier dumps, a failover to a standby that missed pushes, truncated tables, a reset counter, a re-created schema, copied and restored store files, frozen backends, account changes and a full disk",
            .enabled(if: Capabilities.canMountTmpfs, "needs to mount a tmpfs (for the full disk)")
        )
        func seededHubFaults() async throws {
            let seed = SeededGenerator.seed
            var generator = SeededGenerator(seed: seed)
            let servers = try Servers()
            let role = try servers.primary.makeRole("model")
            // Another namespace the role may use, for account changes.
            let away = "\(role.name)_away"
            try servers.primary.psql("CREATE ROLE \(away) NOLOGIN; GRANT \(away) TO \(role.name);")
            try servers.standby.becomeStandby(of: servers.primary)
            let url =
                "host=\(servers.primary.folder),\(servers.standby.folder) dbname=\(PostgresCluster.database) user=\(role.name) password=\(role.password) target_session_attrs=read-write"
            // Daemon c's database lives on a small file system of its own, which a fault fills.
            let small = directory.file("small")
            try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
            try #require(mount("tmpfs", small, "tmpfs", 0, "size=8m") == 0)
            defer { umount(small) }
            var names = ["a", "b", "c"]
            var daemons = try names.map { name in
                try daemon(name, url: url, database: name == "c" ? small + "/c.sqlite" : nil)
            }
            var model = Model()
            // What the daemons wrote while on the other namespace: it must stay there.
            var awayModel = Model()
            // Keys of the other namespace no replica holds any more (each daemon went home after
            // writing there): a fault that loses hub rows loses them for good, and they are not
            // checked after it.
            var awayForgotten: Set<String> = []
            let faults = [
                "dump", "restore", "failover", "truncate", "counter reset", "schema re-created",
                "copied file", "restored file", "frozen backend", "account change", "full disk",
            ]
            // Every fault once, in an order of the seed's, then some of the seed's choosing.
            var plan = faults.shuffled(using: &generator)
            plan.insert("dump", at: 0)
            for _ in 0..<SuiteScale.pick(ci: 1, full: 12) {
                plan.append(faults.randomElement(using: &generator) ?? "dump")
            }
            for fault in plan {
                for (index, daemon) in daemons.enumerated() {
                    write(names[index], on: daemon, model: &model, using: &generator)
                }
                var step = fault
                if ["restore", "failover", "truncate", "schema re-created"].contains(fault) {
                    awayForgotten.formUnion(awayModel.expected.keys)
                    awayModel = Model()
                }
                switch fault {
                case "dump":
                    let file = directory.file("dump-\(model.dumps.count).pgdump")
                    try servers.primary.dumpHub(to: file)
                    model.dumps.append(file)
                case "restore":
                    guard let file = model.dumps.randomElement(using: &generator) else { continue }
                    try servers.primary.restoreHub(from: file)
                    step += " \(file.split(separator: "/").last ?? "")"
                case "failover":
                    try servers.failOver {
                        // Pushed to the primary alone: the standby never sees them.
                        for (index, daemon) in daemons.enumerated() {
                            write(names[index], on: daemon, model: &model, using: &generator)
                            _ = daemon.cli("sync", "--wait", "--timeout", "20")
                        }
                    }
                case "truncate":
                    let table =
                        ["entries", "replicas", "namespaces", "channels"].randomElement(using: &generator)
                        ?? "entries"
                    try servers.primary.psql("TRUNCATE settingsd.\(table)")
                    step += " \(table)"
                case "counter reset":
                    try servers.primary.psql("UPDATE settingsd.namespaces SET last_seq = 0")
                case "schema re-created":
                    try servers.primary.dropHub()
                    _ = try HubAdministration.initialize(url: servers.primary.conninfo())
                case "copied file":
                    let index = Int.random(in: 0..<daemons.count, using: &generator)
                    let name = "copy\(daemons.count)"
                    #expect(daemons[index].terminate() == 0)
                    try FileManager.default.copyItem(
                        atPath: daemons[index].database, toPath: directory.file("\(name).sqlite"))
                    try daemons[index].start()
                    daemons.append(try daemon(name, url: url))
                    names.append(name)
                    step += " of \(names[index])"
                case "restored file":
                    let index = Int.random(in: 0..<daemons.count, using: &generator)
                    let target = daemons[index]
                    let backup = directory.file("backup-\(names[index]).sqlite")
                    _ = target.cli("sync", "--wait", "--timeout", "20")
                    #expect(target.terminate() == 0)
                    try? FileManager.default.removeItem(atPath: backup)
                    try FileManager.default.copyItem(atPath: target.database, toPath: backup)
                    try target.start()
                    // Writes the backup lacks reach the hub; then the file goes back.
                    write(names[index], on: target, model: &model, using: &generator)
                    _ = target.cli("sync", "--wait", "--timeout", "20")
                    #expect(target.terminate() == 0)
                    for suffix in ["", "-wal", "-shm"] {
                        try? FileManager.default.removeItem(atPath: target.database + suffix)
                    }
                    try FileManager.default.copyItem(atPath: backup, toPath: target.database)
                    try target.start()
                    step += " of \(names[index])"
                case "account change":
                    // Restarted on the other namespace, written there, and back: what it
                    // acknowledged on either side stays on that side.
                    let index = Int.random(in: 0..<daemons.count, using: &generator)
                    let home = daemons[index]
                    #expect(home.cli("sync", "--wait", "--timeout", "30").status == 0, "seed \(seed)")
                    #expect(home.terminate() == 0)
                    let moved = try daemon(names[index], url: url, database: home.database, namespace: away)
                    write("\(names[index])-away", on: moved, model: &awayModel, using: &generator)
                    let wait = moved.cli("sync", "--wait", "--timeout", "30")
                    #expect(wait.status == 0, "seed \(seed): \(wait.error)")
                    let held = try hubState(servers, namespace: away).live
                    let wrong = Set(held.keys).union(awayModel.live.keys).filter {
                        held[$0] != awayModel.live[$0]
                            && (awayModel.expected[$0] != nil || !awayForgotten.contains($0))
                    }
                    #expect(
                        wrong.isEmpty,
                        "seed \(seed): the other namespace differs on \(wrong.sorted().map { "\($0): hub \(held[$0] ?? "none"), model \(awayModel.live[$0] ?? "none")" })"
                    )
                    #expect(moved.terminate() == 0)
                    try home.start()
                    // Back on its own namespace the store holds nothing synced until it has pulled
                    // it again: a delete before then would delete nothing (a user deletes what
                    // the daemon shows).
                    #expect(home.cli("sync", "--wait", "--timeout", "30").status == 0, "seed \(seed)")
                    write(names[index], on: home, model: &model, using: &generator)
                    step += " of \(names[index])"
                case "full disk":
                    guard let index = names.firstIndex(of: "c") else { continue }
                    let filler = fill(small)
                    // Acknowledged writes elsewhere reach c once it has room again; its own
                    // writes fail or are acknowledged, and the model keeps only those.
                    for (other, daemon) in daemons.enumerated() {
                        write(names[other], on: daemon, model: &model, using: &generator)
                    }
                    try probeWait(
                        daemons[index], writer: names[index], servers, namespace: role.name, model: model,
                        seed: seed)
                    try FileManager.default.removeItem(atPath: filler)
                case "frozen backend":
                    let connection = try PostgresConnection(
                        conninfo: servers.primary.conninfo(), defaults: [:])
                    let rows = try connection.execute(
                        "SELECT pid::bigint FROM pg_stat_activity WHERE usename = $1", [.text(role.name)])
                    let pids = (0..<rows.count).map { pid_t(rows.int64($0, 0)) }
                    for pid in pids { kill(pid, SIGSTOP) }
                    let index = Int.random(in: 0..<daemons.count, using: &generator)
                    write(names[index], on: daemons[index], model: &model, using: &generator)
                    // With the backends frozen it cannot pass honestly, unless a link happened to be
                    // reconnecting (to a backend not frozen): whenever it passes, it must be true.
                    try probeWait(
                        daemons[index], writer: names[index], servers, namespace: role.name, model: model,
                        seed: seed, timeout: "2")
                    // Past the stall timeout the links reconnect; the frozen sessions then resume.
                    try await Task.sleep(for: .seconds(2))
                    for pid in pids { kill(pid, SIGCONT) }
                default:
                    break
                }
                model.log.append(step)
                let probe = Int.random(in: 0..<daemons.count, using: &generator)
                try probeWait(
                    daemons[probe], writer: names[probe], servers, namespace: role.name, model: model,
                    seed: seed)
                try expectConverged(daemons, servers, namespace: role.name, model: model, seed: seed)
            }
        }
    }
}
