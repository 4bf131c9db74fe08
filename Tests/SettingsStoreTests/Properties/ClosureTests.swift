import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Closure: every value the store accepts passes every other path unchanged")
    struct ClosureTests {
        let directory = TemporaryDirectory()

        @Test(
            "get --json, list --json, watch --json, export then import, and sync carry every value bit for bit"
        )
        func everyPathCarriesEveryValue() async throws {
            let replica = try DaemonProcess(directory, database: directory.file("b.sqlite"))
            let daemon = try DaemonProcess(
                directory, database: directory.file("a.sqlite"), arguments: ["--peer", replica.socket])
            let watcher = Process()
            watcher.executableURL = URL(fileURLWithPath: SettingsdBinary.path)
            watcher.arguments = ["watch", "closure.", "--json", "--socket", daemon.socket]
            let watchOutput = Pipe()
            watcher.standardOutput = watchOutput
            try watcher.run()
            defer { watcher.terminate() }
            let client = try daemon.client()
            try await waitUntil { try DaemonStatus(fields: client.request(.status)).watches == 1 }

            let seed = SeededGenerator.seed
            print("closure: SETTINGSD_SEED=\(seed)")
            // What `import --format dconf` stores travels like any value: typed GVariants included.
            let dconfValues = GVariantCodecTests.fixtures.compactMap { fixture in
                try? GVariant(parsing: fixture.text).untypedSettingValue()
            }
            let values = SettingsCorpus.values + SettingsCorpus.randomDates(24, seed: seed) + dconfValues
            let keyOf = { (index: Int) in
                "closure.\(index).\(index.isMultiple(of: 2) ? "caf\u{E9}" : "\u{1F600}")"
            }
            for (index, value) in values.enumerated() {
                try client.request(.set(key: keyOf(index), value: value))
                let got = daemon.cli("get", keyOf(index), "--json")
                #expect(
                    try SettingValue(jsonText: got.output).isIdentical(to: value), "get --json of \(index)")
            }
            func check(_ members: [String: JSONValue], _ path: String) throws {
                #expect(members.count == values.count, "\(path): \(members.count) keys")
                for (index, value) in values.enumerated() {
                    let json = try #require(members[keyOf(index)], "\(path): \(keyOf(index)) missing")
                    #expect(try SettingValue(json: json).isIdentical(to: value), "\(path) of value \(index)")
                }
            }
            func listed(_ process: DaemonProcess) throws -> [String: JSONValue] {
                guard
                    case .object(let members) = try JSONValue.parse(
                        process.cli("list", "closure.", "--json").output)
                else { return [:] }
                return members
            }
            try check(try listed(daemon), "list --json")

            // watch --json: one event per set, in order.
            var lines: [Substring] = []
            var pending = Data()
            while lines.count < values.count {
                let chunk = watchOutput.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending += chunk
                let text = String(decoding: pending, as: UTF8.self)
                lines = text.split(separator: "\n", omittingEmptySubsequences: true)
                if !text.hasSuffix("\n") { lines.removeLast() }
            }
            var watched: [String: JSONValue] = [:]
            for line in lines {
                guard case .event(_, let change) = try WireMessage.decode(JSONValue.parse(String(line)))
                else { continue }
                for keyChange in change.changes { watched[keyChange.key] = keyChange.value?.json }
            }
            try check(watched, "watch --json")

            // export, then import into a fresh daemon.
            let file = directory.file("closure.json")
            #expect(daemon.cli("export", file).status == 0)
            let fresh = try DaemonProcess(directory, database: directory.file("c.sqlite"))
            #expect(fresh.cli("import", file).status == 0)
            try check(try listed(fresh), "export then import")

            // sync to the peer.
            try await waitUntil(timeout: 30) { try listed(replica).count == values.count }
            try check(try listed(replica), "replica sync")
        }
    }
}
