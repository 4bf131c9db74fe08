import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// docs/PROTOCOL.md and docs/SYNC.md are what strangers write clients and peers from: their
/// tables are read here and checked against the code, so the two cannot drift apart.
@Suite("Docs contract: the protocol's tables and test vectors match the code")
struct DocsContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func document(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/\(name)"), encoding: .utf8)
    }

    /// The rows of the first table after `heading`, as cells without their outer pipes.
    static func table(after heading: String, in text: String) throws -> [[String]] {
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "no heading '\(heading)'")
        var rows: [[String]] = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("|") else {
                if rows.isEmpty { continue } else { break }
            }
            let cells = line.dropFirst().dropLast().components(separatedBy: " | ").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            rows.append(cells)
        }
        // The header and its rule.
        return Array(rows.dropFirst(2))
    }

    /// The first `code` span of a cell.
    static func code(_ cell: String) -> String? {
        let parts = cell.components(separatedBy: "`")
        return parts.count >= 3 ? parts[1] : nil
    }

    @Test("every reason an event can carry is in the reasons table, and nothing else")
    func reasons() throws {
        let documented = try Self.table(after: "### Reasons", in: Self.document("PROTOCOL.md")).compactMap {
            Self.code($0[0])
        }
        // `resync` is made by the Swift client itself after a reconnect; no daemon sends it.
        let sent = ChangeReason.allCases.filter { $0 != .resync }.map(\.rawValue)
        #expect(Set(documented) == Set(sent))
        #expect(documented.count == sent.count)
    }

    @Test("every error code a daemon sends is in the error table, and nothing else")
    func errorCodes() throws {
        let documented = try Self.table(after: "## Error codes", in: Self.document("PROTOCOL.md")).compactMap
        {
            Self.code($0[0])
        }
        let sent = SettingsError.Code.all.filter { !$0.isLocal }.map(\.rawValue)
        #expect(Set(documented) == Set(sent))
        #expect(documented.count == sent.count)
    }

    @Test("every operation the daemon serves is in the operations table, and nothing else")
    func operations() throws {
        let documented = try Self.table(after: "## Operations", in: Self.document("PROTOCOL.md")).compactMap {
            Self.code($0[0])
        }
        #expect(Set(documented) == Set(WireRequest.operations))
        for operation in WireRequest.operations {
            let (_, request) = WireRequest.decode(
                JSONValue.object(["id": .integer(1), "op": .string(operation)]))
            if case .failure(let error) = request {
                #expect(error.code != .unknownOperation, "\(operation)")
            }
        }
        let (_, unknown) = WireRequest.decode(JSONValue.object(["id": .integer(1), "op": .string("fly")]))
        #expect(throws: SettingsError.self) { try unknown.get() }
    }

    @Test(
        "every field a request can carry is named in its row of the operations table: since, preconditions, text, stored"
    )
    func requestFieldsAreDocumented() throws {
        let rows = try Self.table(after: "## Operations", in: Self.document("PROTOCOL.md"))
        let version = SettingVersion(timestamp: .init(rawValue: 1 << 16), replica: .random())
        let requests: [WireRequest] = [
            .watch(filter: .keysOrPrefixes(keys: ["a"], prefixes: ["b."]), since: 3), .getStored(key: "a"),
            .getVersioned(key: "a"),
            .set(key: "a", value: 1, precondition: .version(version)),
            .setText(key: "a", text: "1", precondition: .absent),
            .delete(key: "a", precondition: .version(version)), .delete(key: "a", precondition: .absent),
            .setMany(changes: [
                .init(key: "a", value: 1, if: .version(version)), .init(key: "b", value: nil, if: .absent),
            ]),
        ]
        for request in requests {
            let row = try #require(
                rows.first { Self.code($0[0]) == request.operation }, "\(request.operation)")
            var names: Set<String> = []
            func collect(_ json: JSONValue) {
                switch json {
                case .object(let members):
                    for (name, value) in members where !name.hasPrefix("$") {
                        names.insert(name)
                        collect(value)
                    }
                case .array(let elements): elements.forEach(collect)
                default: break
                }
            }
            collect(request.json(id: 1))
            for name in names.subtracting(["id", "op"]) {
                // Named as a field (`name`) or in a JSON example ("name": …).
                #expect(
                    row[1].contains("`\(name)`") || row[1].contains("\"\(name)\":"),
                    "'\(name)' of '\(request.operation)' is not in its row")
            }
        }
    }

    @Test(
        "the event example carries a sequence, and the error a failed precondition or a compacted history sends reads back"
    )
    func eventsAndErrorsOfResumption() throws {
        let protocolText = try Self.document("PROTOCOL.md")
        let example = try #require(
            protocolText.components(separatedBy: "```json\n").dropFirst().first {
                $0.hasPrefix(#"{"event": "change""#)
            })
        let text = try #require(example.components(separatedBy: "```").first)
            .replacingOccurrences(of: "<replica uuid>", with: ReplicaID.random().description)
            .replacingOccurrences(of: "<uuid>", with: ReplicaID.random().description)
        guard case .event(_, let change) = try WireMessage.decode(try JSONValue.parse(text)) else {
            Issue.record("the example is no event")
            return
        }
        #expect(change.sequence == 42)
        let version = SettingVersion(timestamp: .init(rawValue: 9 << 16), replica: .random())
        let mismatch = SettingsError.versionMismatch([("k", .absent, version), ("j", .version(version), nil)])
        for error in [mismatch, SettingsError.historyCompactedForTests(oldest: 17)] {
            guard
                case .response(_, .failure(let read)) = try WireMessage.decode(
                    WireMessage.failure(id: 1, error))
            else {
                Issue.record("not a failure")
                continue
            }
            #expect(read == error)
            #expect(protocolText.contains("| `\(error.code)` |"))
        }
        let expected: [String: SettingVersion?] = ["k": version, "j": SettingVersion?.none]
        #expect(mismatch.currentVersions == expected)
        #expect(mismatch.key == "j")
    }

    @Test("docs/SYNC.md shows every replica frame")
    func replicaFrames() throws {
        let sync = try Self.document("SYNC.md")
        let one = SettingEntry(
            key: "k", value: 1, version: SettingVersion(timestamp: .zero, replica: .random()), sequence: 1)
        let frames: [ReplicationMessage] = [
            .replicate(entries: [one], through: 1, sequence: 1), .acknowledge(through: 1, settled: 1),
            .start(cursor: 0), .neighbours([]), .check(digest: 0, settled: 0), .agreed(settled: 0), .busy,
            .buckets([]), .repair(buckets: [], entries: [], final: false, applied: 0), .forked(reason: ""),
            .refused(reason: ""), .retry,
        ]
        for frame in frames {
            guard case .object(let members) = frame.json, case .string(let operation)? = members["op"] else {
                continue
            }
            #expect(sync.contains("\"op\": \"\(operation)\""), "docs/SYNC.md does not show '\(operation)'")
        }
    }

    @Test("the fingerprint, bucket and digest test vectors in docs/SYNC.md are what the code computes")
    func digestVectors() throws {
        let sync = try Self.document("SYNC.md")
        let rows = try Self.table(after: "### The digest, exactly", in: sync)
        #expect(rows.count == 5)
        var sum: UInt64 = 0
        var computed: [String] = []
        for row in rows {
            let key = try #require(Self.code(row[0]))
            let versionText = try #require(Self.code(row[1]))
            let version = try #require(SettingVersion(versionText))
            let value = try Self.code(row[2]).map { try SettingValue(jsonText: $0) }
            let entry = SettingEntry(key: key, value: value, version: version, sequence: 1)
            let fingerprint = Fingerprint.of(entry)
            sum &+= fingerprint
            let hex = ReplicationMessage.hex(fingerprint)
            let bucket = ReplicaCache.bucket(of: key)
            computed.append("\(key): `\(hex)` | \(bucket)")
            #expect(Self.code(row[3]) == hex, "fingerprint of \(key)")
            #expect(row[4] == String(bucket), "bucket of \(key)")
        }
        let digestLine = try #require(
            sync.components(separatedBy: "\n").first { $0.hasPrefix("Digest of the five:") })
        #expect(
            Self.code(digestLine) == ReplicationMessage.hex(sum),
            "computed: \(computed), digest \(ReplicationMessage.hex(sum))")
    }

    @Test("the plots in docs/plots are what scripts/plots draws from the benchmark data beside them")
    func plotsAreCurrent() throws {
        let output = TemporaryDirectory()
        let result = DaemonProcess.run(
            [Self.root.appendingPathComponent("scripts/plots").path],
            environment: ["SETTINGSD_PLOTS_OUT": output.path, "PATH": "/usr/bin:/bin", "HOME": output.path],
            through: "/usr/bin/python3")
        #expect(result.status == 0, "\(result.error)")
        let plots = Self.root.appendingPathComponent("docs/plots")
        let names = try FileManager.default.contentsOfDirectory(atPath: plots.path).filter {
            $0.hasSuffix(".svg")
        }
        #expect(names.count >= 2)
        for name in names {
            let drawn = try Data(contentsOf: URL(fileURLWithPath: output.file(name)))
            let checkedIn = try Data(contentsOf: plots.appendingPathComponent(name))
            #expect(drawn == checkedIn, "docs/plots/\(name) is not what its data draw: run scripts/plots")
        }
    }

    @Test("every relative link in the README, BENCHMARKS.md and docs/ names a file that exists")
    func relativeLinksResolve() throws {
        let documents =
            ["README.md", "BENCHMARKS.md"]
            + (try FileManager.default.subpathsOfDirectory(
                atPath: Self.root.appendingPathComponent("docs").path))
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        #expect(documents.contains("docs/guides/getting-started.md"))
        var broken: [String] = []
        for document in documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            let folder = Self.root.appendingPathComponent(document).deletingLastPathComponent()
            for match in text.matches(of: /\]\(([^)#\s]+)(#[^)]*)?\)/) {
                let target = String(match.output.1)
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                if !FileManager.default.fileExists(atPath: folder.appendingPathComponent(target).path) {
                    broken.append("\(document) → \(target)")
                }
            }
        }
        #expect(broken.isEmpty, "\(broken)")
    }
}

extension SettingsError {
    /// `historyCompacted` with `oldest`, as a store makes it.
    static func historyCompactedForTests(oldest: Int64) -> SettingsError {
        var error = SettingsError(
            .historyCompacted, "changes can be replayed after \(oldest) at the earliest")
        error.oldestReplayableSequence = oldest
        return error
    }

}
