import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A plain model of a store: what every rule says it should hold, keyed by the bytes of each
/// key's NFC form.
private struct StoreModel {
    var values: [[UInt8]: SettingValue] = [:]

    mutating func set(_ key: String, _ value: SettingValue) { values[modelKey(key)] = value }
    mutating func remove(_ key: String) { values[modelKey(key)] = nil }

    mutating func importValues(_ document: [String: SettingValue], replacing: Bool) {
        if replacing { values = [:] }
        for (key, value) in document { set(key, value) }
    }

    /// Compares with what the store reports; returns what differs.
    func differences(from actual: [String: SettingValue], step: Int, seed: UInt64) -> [String] {
        var problems: [String] = []
        var seen: Set<[UInt8]> = []
        for (key, value) in actual {
            let bytes = Array(key.utf8)
            guard bytes == modelKey(key) else {
                problems.append("step \(step), seed \(seed): key \(key.debugDescription) is not in NFC")
                continue
            }
            seen.insert(bytes)
            guard let expected = values[bytes], expected.isIdentical(to: value) else {
                problems.append(
                    "step \(step), seed \(seed): \(key.debugDescription) holds \(value.description.prefix(80))"
                )
                continue
            }
        }
        for key in values.keys where !seen.contains(key) {
            problems.append(
                "step \(step), seed \(seed): \(String(decoding: key, as: UTF8.self).debugDescription) is missing"
            )
        }
        return problems
    }
}

extension SyncReliability {
    @Suite("Model-based: random operations against a plain model, through the library and the daemon")
    struct ModelBasedTests {
        let directory = TemporaryDirectory()

        @Test("the library agrees with the model after every step, across reopening")
        func library() throws {
            let seed = SeededGenerator.seed
            var corpus = SettingsCorpus(seed: seed)
            var model = StoreModel()
            var settings = try Settings(path: directory.database)
            for step in 0..<SuiteScale.pick(ci: 400, full: 5_000) {
                switch Int.random(in: 0..<100, using: &corpus.generator) {
                case 0..<45:
                    let (key, value) = (corpus.key(), corpus.value())
                    try settings.set(value, forKey: key)
                    model.set(key, value)
                case 45..<60:
                    let key = corpus.key()
                    try settings.removeValue(forKey: key)
                    model.remove(key)
                case 60..<75:
                    var writes: [(String, SettingValue?)] = []
                    for _ in 0..<Int.random(in: 1...6, using: &corpus.generator) {
                        writes.append((corpus.key(), corpus.chance(70) ? corpus.value() : nil))
                    }
                    try settings.transaction { transaction in
                        for (key, value) in writes {
                            if let value {
                                try transaction.set(value, forKey: key)
                            } else {
                                try transaction.removeValue(forKey: key)
                            }
                        }
                    }
                    for (key, value) in writes {
                        if let value { model.set(key, value) } else { model.remove(key) }
                    }
                case 75..<85:
                    // Export, then import the document back, sometimes replacing: a no-op either way.
                    let text = ExportDocument(values: settings.snapshot()).json.serialized()
                    let document = try ExportDocument(jsonText: Array(text.utf8))
                    let sequence = settings.sequence
                    try settings.importValues(document.values, replacingExisting: corpus.chance(50))
                    #expect(settings.sequence == sequence, "seed \(seed): re-importing changed the store")
                case 85..<92:
                    var document: [String: SettingValue] = [:]
                    for _ in 0..<Int.random(in: 0...5, using: &corpus.generator) {
                        document[corpus.key()] = corpus.value()
                    }
                    let replacing = corpus.chance(30)
                    try settings.importValues(document, replacingExisting: replacing)
                    model.importValues(document, replacing: replacing)
                default:
                    settings.close()
                    settings = try Settings(path: directory.database)
                }
                let problems = model.differences(from: settings.snapshot(), step: step, seed: seed)
                #expect(problems.isEmpty, "\(problems.prefix(3))")
                if !problems.isEmpty { return }
            }
        }

        @Test("the daemon agrees with the model after every step, across restarts")
        func daemon() throws {
            let seed = SeededGenerator.seed
            var corpus = SettingsCorpus(seed: seed)
            var model = StoreModel()
            let daemon = try DaemonProcess(directory)
            var client = try daemon.client()
            for step in 0..<SuiteScale.pick(ci: 200, full: 2_000) {
                switch Int.random(in: 0..<100, using: &corpus.generator) {
                case 0..<45:
                    let (key, value) = (corpus.key(), corpus.value())
                    try client.request(.set(key: key, value: value))
                    model.set(key, value)
                case 45..<60:
                    let key = corpus.key()
                    try client.request(.delete(key: key))
                    model.remove(key)
                case 60..<75:
                    var writes: [WireRequest.KeyWrite] = []
                    for _ in 0..<Int.random(in: 1...6, using: &corpus.generator) {
                        writes.append(
                            .init(key: corpus.key(), value: corpus.chance(70) ? corpus.value() : nil))
                    }
                    try client.request(.setMany(changes: writes))
                    for write in writes {
                        if let value = write.value {
                            model.set(write.key, value)
                        } else {
                            model.remove(write.key)
                        }
                    }
                case 75..<85:
                    guard case let document? = try client.request(.export)["document"] else { continue }
                    let sequence = try DaemonStatus(fields: client.request(.status)).sequence
                    _ = try client.importDocument(
                        try ExportDocument(json: document), replacingExisting: corpus.chance(50))
                    #expect(try DaemonStatus(fields: client.request(.status)).sequence == sequence)
                case 85..<92:
                    var values: [String: SettingValue] = [:]
                    for _ in 0..<Int.random(in: 0...5, using: &corpus.generator) {
                        values[corpus.key()] = corpus.value()
                    }
                    let replacing = corpus.chance(30)
                    _ = try client.importDocument(
                        ExportDocument(values: values), replacingExisting: replacing)
                    model.importValues(values, replacing: replacing)
                default:
                    if corpus.chance(50) { daemon.kill() } else { _ = daemon.terminate() }
                    try daemon.start()
                    client = try daemon.client()
                }
                var actual: [String: SettingValue] = [:]
                if case .object(let members)? = try client.request(.list(prefix: "", includeValues: true))[
                    "values"]
                {
                    for (key, json) in members { actual[key] = try SettingValue(json: json) }
                }
                let problems = model.differences(from: actual, step: step, seed: seed)
                #expect(problems.isEmpty, "\(problems.prefix(3))")
                if !problems.isEmpty { return }
            }
        }
    }
}
