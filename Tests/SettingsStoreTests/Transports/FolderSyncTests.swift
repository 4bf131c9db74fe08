import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

@Suite("Synced folders: replicas writing files of their own, reading the others'")
struct FolderSyncTests {
    let directory = TemporaryDirectory()

    /// A store on a file of its own, syncing through `folder`.
    final class Machine {
        let path: String
        let folder: String
        var settings: Settings?
        var replicator: Replicator?
        var link: FolderLink?

        init(path: String, folder: String) throws {
            self.path = path
            self.folder = folder
            try start()
        }

        func start() throws {
            let settings = try Settings(path: path)
            let replicator = Replicator(settings: settings)
            self.settings = settings
            self.replicator = replicator
            link = replicator.sync(withFolder: folder)
        }

        /// Stops and closes, as a daemon that ends (the store was durable at each write).
        func stop() {
            link?.stop()
            (link, replicator, settings) = (nil, nil, nil)
        }

        var store: Settings {
            get throws { try #require(settings) }
        }
    }

    func values(_ settings: Settings) -> [String: SettingValue] {
        var result: [String: SettingValue] = [:]
        for key in settings.keys(withPrefix: "") { result[key] = settings.value(forKey: key) }
        return result
    }

    @Test("two stores on one folder converge: sets, deletes and a large batch; both say they agree")
    func twoStores() async throws {
        let folder = directory.file("Sync/settings")
        let a = try Machine(path: directory.file("a.sqlite"), folder: folder)
        let b = try Machine(path: directory.file("b.sqlite"), folder: folder)
        try a.store.set("dark", forKey: "ui.theme")
        try b.store.set(14, forKey: "ui.size")
        try b.store.set("x", forKey: "doomed")
        try a.store.transaction { transaction in
            for index in 0..<3_000 { try transaction.set(index, forKey: "bulk.\(index)") }
        }
        try await waitUntil(timeout: 30) {
            try b.store.value(forKey: "bulk.2999") == 2999 && a.store.value(forKey: "doomed") == "x"
        }
        try a.store.removeValue(forKey: "doomed")
        try await waitUntil(timeout: 30) { try b.store.value(forKey: "doomed") == nil }
        try await waitUntil(timeout: 30) {
            let statuses = [a.link?.status, b.link?.status].compactMap { $0 }
            return statuses.allSatisfy {
                $0.isCaughtUp && $0.replicas.count == 1 && $0.replicas[0].agreement == "agreed"
            }
        }
        #expect(try a.store.digest == b.store.digest)
        #expect(try a.store.value(forKey: "ui.size") == 14)
        let status = try #require(a.link?.status)
        #expect(status.replicas.first?.replica == (try b.store.replicaID))
        #expect(status.isWatching)
    }

    @Test("a store restarted reads only what is new, and writes again what was removed from its folder")
    func restartAndRemovedFiles() async throws {
        let folder = directory.file("shared")
        let a = try Machine(path: directory.file("a.sqlite"), folder: folder)
        let b = try Machine(path: directory.file("b.sqlite"), folder: folder)
        try a.store.set(1, forKey: "one")
        try await waitUntil(timeout: 30) { try b.store.value(forKey: "one") == 1 }
        b.stop()
        try a.store.set(2, forKey: "two")
        try b.start()
        try await waitUntil(timeout: 30) { try b.store.value(forKey: "two") == 2 }
        // Someone removes a's files: a writes its entries again, and a new store still gets them.
        let own = folder + "/" + (try a.store.replicaID.description)
        for name in try FileManager.default.contentsOfDirectory(atPath: own) { unlink(own + "/" + name) }
        let c = try Machine(path: directory.file("c.sqlite"), folder: folder)
        try await waitUntil(timeout: 30) {
            try c.store.value(forKey: "one") == 1 && c.store.value(forKey: "two") == 2
        }
    }

    @Test(
        "files that are not settingsd's, a syncer's copies and damaged files are skipped, counted, and change nothing"
    )
    func strangeFiles() async throws {
        let folder = directory.file("strange")
        let a = try Machine(path: directory.file("a.sqlite"), folder: folder)
        let b = try Machine(path: directory.file("b.sqlite"), folder: folder)
        try a.store.set("kept", forKey: "k")
        try await waitUntil(timeout: 30) { try b.store.value(forKey: "k") == "kept" }
        let own = folder + "/" + (try a.store.replicaID.description)
        let batch = try #require(
            try FileManager.default.contentsOfDirectory(atPath: own).first { $0.hasPrefix("b-") })
        let bytes = try #require(FileManager.default.contents(atPath: own + "/" + batch))
        // A conflict copy carrying a forged value, a note, a folder that is no replica's, and a
        // whole file of a newer format under a valid name.
        let forged = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "kept", with: "forged")
        try forged.write(
            toFile: own + "/"
                + batch.replacingOccurrences(of: ".jsonl", with: ".sync-conflict-20261207-1.jsonl"),
            atomically: true, encoding: .utf8)
        try "hello".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/photos", withIntermediateDirectories: true)
        try "hello".write(toFile: own + "/notes.txt", atomically: true, encoding: .utf8)
        try await waitUntil(timeout: 30) { (b.link?.status.ignoredFiles ?? 0) >= 3 }
        try a.store.set("after", forKey: "k2")
        try await waitUntil(timeout: 30) { try b.store.value(forKey: "k2") == "after" }
        #expect(try b.store.value(forKey: "k") == "kept")
        #expect(b.link?.status.lastError == nil)
    }

    @Test(
        "a store file copied to a second machine: the copies take new ids, nothing written on either is lost")
    func copiedStore() async throws {
        let folder = directory.file("copied")
        let a = try Machine(path: directory.file("a.sqlite"), folder: folder)
        try a.store.set("before the copy", forKey: "old")
        try await waitUntil(timeout: 30) { (a.link?.status.pendingUp ?? 1) == 0 }
        a.stop()
        try FileManager.default.copyItem(
            atPath: directory.file("a.sqlite"), toPath: directory.file("copy.sqlite"))
        try a.start()
        let copy = try Machine(path: directory.file("copy.sqlite"), folder: folder)
        try a.store.set("from a", forKey: "a.only")
        try copy.store.set("from the copy", forKey: "copy.only")
        try await waitUntil(timeout: 30) {
            try a.store.value(forKey: "copy.only") == "from the copy"
                && copy.store.value(forKey: "a.only") == "from a"
        }
        #expect(try a.store.replicaID != copy.store.replicaID)
        #expect(try a.store.value(forKey: "old") == "before the copy")
        let forks = [a.link?.status.lastFork, copy.link?.status.lastFork].compactMap { $0 }
        #expect(!forks.isEmpty)
    }

    @Test(
        "chaos: three machines through a hostile syncer, with restarts and a folder restored from an old copy, lose nothing and converge"
    )
    func chaos() async throws {
        let seed = SeededGenerator.seed
        print("folder chaos seed \(seed) (replay with SETTINGSD_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let roots = (0..<3).map { directory.file("machine\($0)/Sync") }
        let syncer = SimulatedSyncer(machines: roots, seed: seed &+ 1)
        let machines = try (0..<3).map {
            try Machine(path: directory.file("m\($0).sqlite"), folder: roots[$0])
        }
        // Each key is written by one machine only, so the model knows its last value.
        var model: [String: Int] = [:]
        var oldCopy: (replica: String, machine: Int, files: [String: Data])?
        for step in 0..<400 {
            let machine = Int.random(in: 0..<3, using: &random)
            let key = "m\(machine).k\(Int.random(in: 0..<40, using: &random))"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                try machines[machine].store.set(step, forKey: key)
                model[key] = step
            case 70..<85:
                try machines[machine].store.removeValue(forKey: key)
                model[key] = nil
            case 85..<88:
                machines[machine].stop()
                try machines[machine].start()
            case 88..<90:
                let replica = try machines[machine].store.replicaID.description
                if let old = oldCopy, old.machine == machine, old.replica == replica {
                    syncer.restore(old.replica, on: old.machine, from: old.files)
                    oldCopy = nil
                } else {
                    oldCopy = (replica, machine, syncer.contents(of: replica, on: machine))
                }
            default:
                // Another machine's write to a key every machine shares: only convergence is checked.
                try machines[machine].store.set(step, forKey: "shared.\(step % 5)")
            }
            if step % 4 == 0 { syncer.step() }
            if step % 50 == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        var last = ""
        defer {
            if !last.isEmpty {
                print("folder chaos, last look: \(last)")
                for (index, root) in roots.enumerated() {
                    for replica in syncer.folders(in: root) {
                        let names =
                            ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + replica))
                            ?? []).sorted()
                        let state =
                            (try? String(
                                contentsOfFile: root + "/" + replica + "/state.json", encoding: .utf8)) ?? ""
                        print(
                            "folder chaos, machine \(index) \(replica.prefix(8)): \(names.joined(separator: " ")) STATE \(state)"
                        )
                    }
                }
                for machine in machines {
                    print(
                        "folder chaos, store \(machine.settings?.replicaID.description.prefix(8) ?? "?") seq \(machine.settings?.sequence ?? -1)"
                    )
                }
            }
        }
        try await waitUntil(timeout: 90) {
            syncer.step(chaos: false)
            let stores = try machines.map { try $0.store }
            let states = stores.map { values($0).filter { !$0.key.hasPrefix("shared.") } }
            let expected = model.mapValues { SettingValue.integer(Int64($0)) }
            last =
                "seed \(seed): "
                + states.enumerated().map { "machine \($0.offset): \($0.element.count) keys" }.joined(
                    separator: ", ") + ", model \(expected.count)"
            last +=
                "; "
                + machines.map { machine in
                    (machine.link?.status.replicas ?? []).map {
                        "\($0.agreement) r\($0.readThrough)/\($0.publishedThrough ?? -1) \($0.waitingFor ?? "")"
                    }.joined(separator: ", ")
                }.joined(separator: " | ")
            let agreed = machines.allSatisfy { machine in
                (machine.link?.status.replicas ?? []).allSatisfy { $0.agreement == "agreed" }
            }
            return states.allSatisfy { $0 == expected } && Set(stores.map(\.digest)).count == 1 && agreed
        }
        last = ""
        for machine in machines {
            let status = try #require(machine.link?.status)
            #expect(status.lastError == nil, "seed \(seed)")
        }
    }
}
