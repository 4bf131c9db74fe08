import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Opening reads the entries in chunks and builds the cache from them on another thread
/// (`EntryScan`, `ReplicaCacheBuilder`): what it builds must be what a store closed with.
@Suite(
    "Opening a store: entries read in chunks build the state the store closed with", .timeLimit(.minutes(2)))
struct StoreOpeningTests {
    let directory = TemporaryDirectory()

    /// Everything a store's cache answers from, in a form to compare.
    struct Snapshot {
        var log: [SettingEntry]
        var digest: String
        var buckets: [UInt64]
        var totals: StoreTotals
        var keys: [String]

        init(_ settings: Settings) {
            log = settings.entries(after: 0)
            digest = settings.digest
            buckets = settings.bucketSums
            totals = settings.cache.withLock { $0.totals }
            keys = settings.keys()
        }

        /// What differs from `other`, each part named once, briefly (empty: nothing).
        func differences(from other: Snapshot) -> [String] {
            var found: [String] = []
            if log.count != other.log.count {
                found.append("log of \(log.count) entries, not \(other.log.count)")
            } else if let index = log.indices.first(where: { log[$0] != other.log[$0] }) {
                found.append("log entry \(index): \(log[index]), not \(other.log[index])")
            }
            if digest != other.digest { found.append("digest \(digest), not \(other.digest)") }
            if buckets != other.buckets { found.append("bucket sums") }
            if totals != other.totals { found.append("totals \(totals), not \(other.totals)") }
            if keys != other.keys { found.append("keys: \(keys.count), not \(other.keys.count)") }
            return found
        }
    }

    /// More keys than two chunks, written in one transaction, then rewritten and deleted here and
    /// there so the sequence order is not the file's key order.
    private func writeStore(keys count: Int) throws -> Snapshot {
        let settings = try Settings(path: directory.database)
        defer { settings.close() }
        try settings.transaction { transaction in
            for index in 0..<count {
                let key = "load.\(index)"
                switch index % 3 {
                case 0: try transaction.set(index, forKey: key)
                case 1: try transaction.set("value \(index)", forKey: key)
                default: try transaction.set(index % 2 == 0, forKey: key)
                }
            }
        }
        for index in stride(from: 0, to: count, by: 997) {
            try settings.set("again \(index)", forKey: "load.\(index)")
        }
        for index in stride(from: 5, to: count, by: 1_999) {
            try settings.removeValue(forKey: "load.\(index)")
        }
        return Snapshot(settings)
    }

    @Test("a store of several chunks reopens with its values, digest, buckets, totals and catch-up order")
    func chunkedOpenRebuildsTheState() throws {
        let count = EntryScan.chunkEntries * 2 + 1_000
        let closed = try writeStore(keys: count)
        #expect(closed.log.count == count)

        let reopened = try Settings(path: directory.database)
        #expect(Snapshot(reopened).differences(from: closed) == [])
        // The next change is numbered after every loaded one.
        try reopened.set("after", forKey: "load.1")
        #expect(reopened.entries(after: 0).last?.sequence == (closed.log.last?.sequence ?? 0) + 1)
        let written = Snapshot(reopened)
        reopened.close()

        var reading = SettingsConfiguration()
        reading.isReadOnly = true
        let reader = try Settings(path: directory.database, configuration: reading)
        #expect(Snapshot(reader).differences(from: written) == [])
        #expect(reader.value(forKey: "load.1") == "after")
    }

    @Test("a key in another normal form in a later chunk is merged with its twin, as in a small file")
    func strayKeyInALaterChunkIsMerged() throws {
        let count = EntryScan.chunkEntries + 100
        let composed = "z.caf\u{E9}"  // sorts after every "load." key: read in the last chunk
        let decomposed = "z.cafe\u{301}"
        do {
            let settings = try Settings(path: directory.database)
            try settings.transaction { transaction in
                for index in 0..<count { try transaction.set(index, forKey: "load.\(index)") }
                try transaction.set("old", forKey: composed)
            }
            settings.close()
        }
        // An old build stored the other spelling as a second row, with a higher version.
        try runSQLite(
            directory.database,
            "INSERT INTO entries (key, value, hlc, replica, seq) SELECT '\(decomposed)', (SELECT value FROM entries WHERE key = 'load.0'), hlc + 1, replica, seq + 1 FROM entries WHERE key = '\(composed)'"
        )
        #expect(try querySQLite(directory.database, "SELECT count(*) FROM entries") == "\(count + 2)")

        let settings = try Settings(path: directory.database)
        #expect(settings.keys().count == count + 1)
        #expect(settings.value(forKey: composed) == .integer(0))
        #expect(settings.value(forKey: decomposed) == .integer(0))
        #expect(settings.value(forKey: "load.\(count - 1)") == .integer(Int64(count - 1)))
        settings.close()
        #expect(try querySQLite(directory.database, "SELECT count(*) FROM entries") == "\(count + 1)")
    }
}
