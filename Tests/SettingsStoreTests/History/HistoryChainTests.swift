import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("History chains: a key's records linked newest to oldest, no key index", .timeLimit(.minutes(2)))
struct HistoryChainTests {
    let directory = TemporaryDirectory()

    @Test(
        "interleaved keys each walk their own chain; a prefix merges chains newest first; times bound the walk",
        arguments: [true, false])
    func chains(onDisk: Bool) throws {
        let clock = SkewedClock()
        let configuration = SettingsConfiguration(clock: clock.read)
        let settings =
            onDisk
            ? try Settings(path: directory.database, configuration: configuration)
            : Settings(inMemoryWith: configuration)
        var times: [UInt64] = []
        for round in 0..<5 {
            times.append(clock.now())  // each round's records are stamped at or after its time
            for key in ["ui.a", "ui.b", "other.c"] {
                try settings.set(round, forKey: key)
            }
            clock.jump(by: 1_000)
        }
        try settings.removeValue(forKey: "ui.b")
        let a = try settings.history(for: "ui.a")
        #expect(a.map(\.value) == [4, 3, 2, 1, 0])
        #expect(a.map(\.previous) == [3, 2, 1, 0, nil])
        let prefix = try settings.history(HistoryQuery(keyOrPrefix: "ui.", limit: 4))
        #expect(prefix.map(\.key) == ["ui.b", "ui.b", "ui.a", "ui.b"])
        #expect(prefix.first?.isDeletion == true)
        #expect(prefix.map(\.sequence) == prefix.map(\.sequence).sorted(by: >))
        let middle = try settings.history(
            HistoryQuery(keyOrPrefix: "ui.a", sinceMilliseconds: times[1], untilMilliseconds: times[3] + 500))
        #expect(middle.map(\.value) == [3, 2, 1])
        #expect(try settings.history(for: "missing").isEmpty)
        #expect(try settings.history(HistoryQuery(limit: 1000)).count == 16)
    }

    @Test(
        "entries from a replica chain onto each key's records, each naming the value it replaced",
        arguments: [true, false])
    func remoteEntriesChain(onDisk: Bool) throws {
        let settings =
            onDisk ? try Settings(path: directory.file("remote.sqlite")) : Settings(inMemoryWith: .init())
        let peer = ReplicaID.random()
        let base = SettingsConfiguration.systemClock() + 1_000
        func entry(_ key: String, _ value: SettingValue?, _ step: UInt64) -> SettingEntry {
            SettingEntry(
                key: key, value: value,
                version: SettingVersion(
                    timestamp: HybridTimestamp(milliseconds: base + step, counter: 0), replica: peer),
                sequence: Int64(step))
        }
        try settings.set(0, forKey: "ui.a")
        try settings.applyRemote(
            [entry("ui.a", 1, 1), entry("ui.b", 10, 1)], from: peer, through: 2, reason: .initialSync)
        try settings.applyRemote(
            [entry("ui.b", nil, 2), entry("ui.a", 2, 2), entry("ui.c", 5, 2)], from: peer, through: 5,
            reason: .replica)
        let a = try settings.history(for: "ui.a")
        #expect(a.map(\.value) == [2, 1, 0])
        #expect(a.map(\.previous) == [1, 0, nil])
        let b = try settings.history(for: "ui.b")
        #expect(b.map(\.isDeletion) == [true, false])
        #expect(b.map(\.previous) == [10, nil])
        #expect(try settings.history(for: "ui.c").map(\.previous) == [nil])
    }

    @Test("a version 3 database, its history indexed by key, opens with every key's records chained")
    func migratesVersion3() throws {
        do {
            let settings = try Settings(path: directory.database)
            for round in 0..<4 {
                try settings.set(round, forKey: "app.x")
                try settings.set("\(round)", forKey: "app.y")
            }
            settings.close()
        }
        // Back to version 3's layout: no chain column, the key index.
        try runSQLite(
            directory.database,
            """
            CREATE TABLE old AS SELECT seq, key, value, previous, redacted, hlc, replica, reason, origin,
                time_ms, uid, pid, exe FROM history;
            DROP TABLE history;
            CREATE TABLE history (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB, previous BLOB,
                redacted INTEGER NOT NULL DEFAULT 0, hlc INTEGER NOT NULL, replica BLOB NOT NULL,
                reason TEXT NOT NULL, origin BLOB NOT NULL, time_ms INTEGER NOT NULL, uid INTEGER,
                pid INTEGER, exe TEXT);
            INSERT INTO history SELECT * FROM old;
            DROP TABLE old;
            CREATE INDEX history_by_key ON history (key, seq);
            ALTER TABLE peers ADD COLUMN acknowledged_seq INTEGER NOT NULL DEFAULT 0;
            PRAGMA user_version = 3;
            """)
        let reopened = try Settings(path: directory.database)
        #expect(try reopened.history(for: "app.x").map(\.value) == [3, 2, 1, 0])
        try reopened.set(9, forKey: "app.x")
        #expect(try reopened.history(for: "app.x").map(\.value) == [9, 3, 2, 1, 0])
        #expect(try reopened.history(for: "app.y").map(\.value) == ["3", "2", "1", "0"])
        #expect(reopened.historyCount == 9)
    }

    @Test("pruning the oldest records shortens every chain from its end")
    func pruningShortensChains() throws {
        var configuration = SettingsConfiguration()
        configuration.history = HistoryRetention(maximumRecords: 6)
        let settings = try Settings(path: directory.database, configuration: configuration)
        for round in 0..<5 {
            try settings.set(round, forKey: "k.a")
            try settings.set(round, forKey: "k.b")
        }
        while try settings.pruneHistory(batch: 3) > 0 {}
        #expect(settings.historyCount == 6)
        #expect(try settings.history(for: "k.a").map(\.value) == [4, 3, 2])
        #expect(try settings.history(HistoryQuery(keyOrPrefix: "k.", limit: 100)).count == 6)
    }
}
