import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

extension SettingKeys {
    fileprivate static let benchVolume = SettingKey<Int>("bench.volume", default: 0)
}

/// `settings-bench store`: the local replica store beside UserDefaults and raw SQLite.
struct StoreBenchmark {
    let quick: Bool

    func run() {
        note(
            "settings-bench store: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(quick ? "quick" : "full") run"
        )
        runSuite { scratch in
            var report = Report(title: "store (durability normal)")
            if selected("reads") { try reads(into: &report, scratch: scratch) }
            if selected("writes") { try durableWrites(into: &report, scratch: scratch) }
            if selected("schema") { try schemaWrites(into: &report, scratch: scratch) }
            if selected("history") {
                try historyWrites(into: &report, scratch: scratch)
                try historyQuery(into: &report, scratch: scratch)
            }
            if selected("batch") { try batch(into: &report, scratch: scratch) }
            if selected("open") { try openLarge(into: &report, scratch: scratch) }
            if selected("gsettings") {
                try GSettingsBenchmark(quick: quick).run(into: &report, scratch: scratch)
            }
            report.print()
        }
    }

    private func reads(into report: inout Report, scratch: Scratch) throws {
        let settings = try Settings(path: scratch.file("reads.sqlite"))
        for index in 0..<1000 { try settings.set(index, forKey: "key.\(index)") }
        try settings.set(42, for: .benchVolume)
        let defaults = userDefaults(scratch)
        defaults.set(42, forKey: "bench.volume")
        let count = quick ? 200_000 : 2_000_000
        var sink = 0
        let rates = alternating(
            ours: { measureRate(count) { _ in sink &+= settings[.benchVolume] } },
            peer: { measureRate(count) { _ in sink &+= defaults.integer(forKey: "bench.volume") } })
        report.rate(
            "typed cached read", ours: rates.ours, peer: rates.peer, peerName: "UserDefaults",
            target: .ratio(atLeast: 5)
        )
        if sink == 1 { print(sink) }  // Keeps the reads from being optimised away.
    }

    private func durableWrites(into report: inout Report, scratch: Scratch) throws {
        let count = quick ? 5_000 : 30_000
        let keys = (0..<1000).map { "key.\($0)" }
        let raw = RawSQLite(path: scratch.file("raw-writes.sqlite"))
        let settings = try Settings(path: scratch.file("writes.sqlite"))
        let rates = try alternating(
            ours: { try measureRate(count) { try settings.set($0, forKey: keys[$0 % keys.count]) } },
            peer: { measureRate(count) { raw.set(keys[$0 % keys.count], Int64($0)) } })
        report.rate(
            "durable single set", ours: rates.ours, peer: rates.peer, peerName: "raw SQLite",
            target: .ratio(atLeast: 0.7))
        let defaults = userDefaults(scratch)
        let peer = measureRate(quick ? 300 : 2_000) { index in
            defaults.set(index, forKey: keys[index % keys.count])
            defaults.synchronize()
        }
        report.rate(
            "durable single set", ours: rates.ours, peer: peer, peerName: "UserDefaults+sync",
            target: .ratio(atLeast: 20))
    }

    /// Durable sets through a schema of 1,000 keys and 100 patterns, beside the same sets with
    /// no schema: what checking every write costs.
    private func schemaWrites(into report: inout Report, scratch: Scratch) throws {
        let count = quick ? 5_000 : 30_000
        let keys = (0..<1000).map { "app.group\($0 % 100).key\($0)" }
        var rules = keys.map { SchemaRule(key: $0, type: .int, minimum: 0, file: "bench.json") }
        rules += (0..<100).map { SchemaRule(key: "other.group\($0).*", type: .any, file: "bench.json") }
        var configuration = SettingsConfiguration()
        configuration.policy.schema = try SettingsSchema(rules: rules)
        let governed = try Settings(path: scratch.file("schema-writes.sqlite"), configuration: configuration)
        let free = try Settings(path: scratch.file("free-writes.sqlite"))
        let rates = try alternating(
            ours: { try measureRate(count) { try governed.set($0, forKey: keys[$0 % keys.count]) } },
            peer: { try measureRate(count) { try free.set($0, forKey: keys[$0 % keys.count]) } })
        report.rate(
            "durable set, schema of 1,000 keys + 100 patterns", ours: rates.ours, peer: rates.peer,
            peerName: "no schema", target: .ratio(atLeast: 0.9))
        try largePolicy(into: &report, scratch: scratch, count: count)
    }

    /// A schema folder of 100,000 rules (a tenth of them patterns) loaded from its files, and
    /// durable sets under 20,000 locks (exact keys and prefixes) beside sets under none.
    private func largePolicy(into report: inout Report, scratch: Scratch, count: Int) throws {
        let ruleCount = quick ? 20_000 : 100_000
        let schemas = scratch.file("large-schemas")
        let system = scratch.file("large-system")
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: system + "/locks.d", withIntermediateDirectories: true)
        for file in 0..<10 {
            let members = (0..<ruleCount / 10).map { index -> String in
                let number = file * (ruleCount / 10) + index
                return number.isMultiple(of: 10)
                    ? "\"bulk.p\(number).*\": {\"type\": \"any\"}"
                    : "\"bulk.g\(number % 997).k\(number)\": {\"type\": \"int\", \"min\": 0}"
            }
            try
                "{\"format\": \"settingsd-schema\", \"version\": 1, \"keys\": {\(members.joined(separator: ", "))}}"
                .write(toFile: "\(schemas)/\(file).json", atomically: true, encoding: .utf8)
        }
        let lockLines = (0..<20_000).map { $0.isMultiple(of: 4) ? "locked.p\($0)." : "locked.k\($0)" }
        try lockLines.joined(separator: "\n").write(
            toFile: system + "/locks.d/bulk", atomically: true, encoding: .utf8)
        var policy = SettingsPolicy()
        let load = try measureSeconds {
            policy = try SettingsPolicy.load(
                schemaDirectories: [schemas], systemDirectory: system, extensions: .gnome)
        }
        report.seconds(
            "load \(policy.schema.rules.count) schema rules and \(policy.locks.count) locks", load,
            target: .atMost(2, "< 2 s"))
        var configuration = SettingsConfiguration()
        configuration.policy = policy
        let keys = (0..<1000).map { "free.group\($0 % 100).key\($0)" }
        let governed = try Settings(path: scratch.file("locked-writes.sqlite"), configuration: configuration)
        let free = try Settings(path: scratch.file("unlocked-writes.sqlite"))
        let rates = try alternating(
            ours: { try measureRate(count) { try governed.set($0, forKey: keys[$0 % keys.count]) } },
            peer: { try measureRate(count) { try free.set($0, forKey: keys[$0 % keys.count]) } })
        report.rate(
            "durable set under 20,000 locks and \(policy.schema.rules.count) rules", ours: rates.ours,
            peer: rates.peer,
            peerName: "no policy", target: .ratio(atLeast: 0.9))
    }

    /// Durable sets that append a history record beside the same sets with history off.
    private func historyWrites(into report: inout Report, scratch: Scratch) throws {
        let count = quick ? 5_000 : 30_000
        let keys = (0..<1000).map { "key.\($0)" }
        var off = SettingsConfiguration()
        off.history = .off
        let recorded = try Settings(path: scratch.file("history-on.sqlite"))
        let plain = try Settings(path: scratch.file("history-off.sqlite"), configuration: off)
        let rates = try alternating(
            ours: { try measureRate(count) { try recorded.set($0, forKey: keys[$0 % keys.count]) } },
            peer: { try measureRate(count) { try plain.set($0, forKey: keys[$0 % keys.count]) } })
        report.rate(
            "durable set with history", ours: rates.ours, peer: rates.peer, peerName: "history off",
            target: .ratio(atLeast: 0.85))
        // The same layout in raw SQLite: a record appended per commit, rows folded every 2,048.
        let plainFloor = RawSQLite(path: scratch.file("raw-plain.sqlite"))
        let recordedFloor = RawSQLite(path: scratch.file("raw-recorded.sqlite")).withHistoryLayout()
        let floors = alternating(
            ours: {
                measureRate(count) { recordedFloor.setRecordedDeferred(keys[$0 % keys.count], Int64($0)) }
            },
            peer: { measureRate(count) { plainFloor.set(keys[$0 % keys.count], Int64($0)) } })
        report.rate(
            "raw SQLite: appended history record, rows folded every 2,048", ours: floors.ours,
            peer: floors.peer,
            peerName: "raw SQLite upsert", target: .reported)
    }

    /// The last 100 changes of one key in a history of a million records (100k quick).
    private func historyQuery(into report: inout Report, scratch: Scratch) throws {
        let records = quick ? 100_000 : 1_000_000
        var configuration = SettingsConfiguration()
        configuration.history = HistoryRetention(maximumRecords: records + 1)
        let settings = try Settings(path: scratch.file("history-large.sqlite"), configuration: configuration)
        for chunk in stride(from: 0, to: records, by: 10_000) {
            try settings.transaction { transaction in
                for index in chunk..<chunk + 10_000 {
                    try transaction.set(index, forKey: "key.\(index % 1_000)")
                }
            }
        }
        var samples: [Double] = []
        for round in 0..<50 {
            samples.append(
                try measureSeconds { _ = try settings.history(for: "key.\(round * 7)", limit: 100) })
        }
        report.seconds(
            "history of one key, last 100, in \(records / 1000)k records (median)", median(samples),
            target: .atMost(0.005, "< 5 ms (1M)"))
    }

    private func batch(into report: inout Report, scratch: Scratch) throws {
        let count = 100_000
        var round = 0
        let keys = (0..<count).map { "batch.key.\($0)" }
        /// The peer: the same keys upserted into a bare two-column table in one transaction.
        func plainBatch(_ name: String) -> Double {
            let raw = RawSQLite(path: scratch.file(name))
            return Double(count)
                / measureSeconds {
                    raw.exec("BEGIN")
                    for (index, key) in keys.enumerated() { raw.set(key, Int64(index)) }
                    raw.exec("COMMIT")
                }
        }
        /// The same writes in raw SQLite, in the store's tables: what its rows and history cost any writer.
        func layoutBatch(_ name: String) -> Double {
            let raw = RawSQLite.storeLayout(path: scratch.file(name))
            return Double(count)
                / measureSeconds {
                    raw.exec("BEGIN")
                    for (index, key) in keys.enumerated() {
                        raw.setEntry(key, Int64(index), sequence: Int64(index + 1))
                    }
                    raw.exec("COMMIT")
                }
        }
        // The three take turns, so that a slow moment of the machine falls on each alike.
        var ours: [Double] = []
        var layout: [Double] = []
        var plain: [Double] = []
        for _ in 0..<3 {
            round += 1
            plain.append(plainBatch("raw-plain-batch-\(round).sqlite"))
            layout.append(layoutBatch("raw-layout-\(round).sqlite"))
            let settings = try Settings(path: scratch.file("batch-\(round).sqlite"))
            ours.append(
                try Double(count)
                    / measureSeconds {
                        try settings.transaction { transaction in
                            for (index, key) in keys.enumerated() { try transaction.set(index, forKey: key) }
                        }
                    })
        }
        report.rate(
            "100k new keys, one transaction", ours: median(ours), peer: median(plain), peerName: "raw SQLite",
            target: .ratio(atLeast: 0.8))
        report.rate(
            "100k new keys, one transaction, beside its own layout", ours: median(ours), peer: median(layout),
            peerName: "raw SQLite, store layout", target: .ratio(atLeast: 0.9))
        report.rate(
            "raw SQLite: the store's rows + history records, one transaction", ours: median(layout),
            peer: median(plain), peerName: "raw SQLite", target: .reported)
    }

    private func openLarge(into report: inout Report, scratch: Scratch) throws {
        let count = quick ? 100_000 : 1_000_000
        let path = scratch.file("large.sqlite")
        do {
            let settings = try Settings(path: path)
            try settings.transaction { transaction in
                for index in 0..<count { try transaction.set(index, forKey: "large.key.\(index)") }
            }
        }
        // Opened in a fresh process, so the memory this one used to build the file (or freed
        // before) neither hides nor inflates what opening costs.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        probe.arguments = ["open-probe", path]
        let output = Pipe()
        probe.standardOutput = output
        try probe.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        let fields = text.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard probe.terminationStatus == 0, fields.count == 2 else {
            throw SettingsError(.io, "the open probe failed: \(text)")
        }
        report.seconds("open \(count / 1000)k keys", fields[0], target: .atMost(0.7, "<= 0.7 s (1M)"))
        report.quantity(
            "open \(count / 1000)k keys: resident memory added", fields[1], unit: "MiB", format: "+%.0f MiB",
            target: .atMost(120, "<= +120 MiB (1M)"))
    }

    /// `settings-bench open-probe PATH`: opens the store at `path` in this fresh process and
    /// prints the seconds it took and the resident memory it added, in MiB.
    static func openProbe(path: String) {
        let before = residentMemoryMiB()
        var opened: Settings?
        do {
            let seconds = try measureSeconds { opened = try Settings(path: path) }
            print(seconds, residentMemoryMiB() - before)
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            exit(1)
        }
        withExtendedLifetime(opened) {}
    }

    private func userDefaults(_ scratch: Scratch) -> UserDefaults {
        let suite = "settings-bench-\(UUID().uuidString.prefix(8))"
        setenv("XDG_CONFIG_HOME", scratch.path, 1)
        return UserDefaults(suiteName: suite) ?? .standard
    }
}
