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
}
