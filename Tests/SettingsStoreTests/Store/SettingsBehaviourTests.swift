import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Store reads, writes, defaults and versions", .timeLimit(.minutes(2)))
struct SettingsBehaviourTests {
    let directory = TemporaryDirectory()

    @Test("a missing key reads its default, and the default is never stored")
    func defaultsAreNotPersisted() throws {
        do {
            let settings = try Settings(path: directory.database)
            #expect(settings[.volume] == 0.5)
            settings.register(defaults: ["ui.font": "Inter"])
            #expect(settings.value(forKey: "ui.font") == "Inter")
            #expect(settings["ui.font"] == "Inter")
            #expect(settings.storedValue(forKey: "ui.font") == nil)
            #expect(settings.keys().isEmpty)
            #expect(settings.sequence == 0)
        }
        let reopened = try Settings(path: directory.database)
        #expect(reopened.value(forKey: "ui.font") == nil)
        #expect(reopened.snapshot().isEmpty)
    }

    @Test("every value type survives a reopen")
    func valuesSurviveReopen() throws {
        let values: [String: SettingValue] = [
            "b": true, "i": 7, "d": 0.1, "s": "x", "data": .data(Data([1, 2])),
            "date": .date(Date(timeIntervalSince1970: 12.345)), "a": [1, "x"], "m": ["k": [true]],
        ]
        do {
            let settings = try Settings(path: directory.database)
            for (key, value) in values { try settings.set(value, forKey: key) }
        }
        let reopened = try Settings(path: directory.database)
        #expect(reopened.snapshot() == values)
    }

    @Test("a removal is a tombstone with a version that survives a reopen")
    func tombstonesSurviveReopen() throws {
        let replica: ReplicaID
        do {
            let settings = try Settings(path: directory.database)
            replica = settings.replicaID
            try settings.set(0.8, for: .volume)
            try settings.removeValue(for: .volume)
        }
        let reopened = try Settings(path: directory.database)
        #expect(reopened.replicaID == replica)
        let entry = try #require(reopened.entry(forKey: "audio.volume"))
        #expect(entry.isTombstone)
        #expect(entry.sequence == 2)
        #expect(entry.version.replica == replica)
        #expect(reopened[.volume] == 0.5)
        #expect(reopened.keys().isEmpty)
    }

    @Test("versions and sequence numbers grow with every change, also across a reopen")
    func versionsGrow() throws {
        var previous: SettingEntry?
        for round in 0..<3 {
            let settings = try Settings(path: directory.database)
            for step in 0..<5 {
                try settings.set(round * 10 + step, for: .launchCount)
                let entry = try #require(settings.entry(forKey: "app.launchCount"))
                if let previous {
                    #expect(entry.sequence == previous.sequence + 1)
                    #expect(entry.version > previous.version)
                }
                previous = entry
            }
        }
    }

    @Test("the clock never goes backwards even when the wall clock does")
    func clockSkew() throws {
        let wall = Mutex<UInt64>(1_000_000)
        let settings = Settings(inMemoryWith: .init(clock: { wall.withLock { $0 } }))
        try settings.set(1, forKey: "k")
        let first = try #require(settings.entry(forKey: "k")).version
        wall.withLock { $0 = 10 }
        try settings.set(2, forKey: "k")
        let second = try #require(settings.entry(forKey: "k")).version
        #expect(second > first)
        #expect(second.timestamp.milliseconds == 1_000_000)
    }

    @Test("update is atomic: 8 concurrent tasks lose no increment")
    func concurrentUpdates() async throws {
        let settings = try Settings(path: directory.database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<250 { try settings.update(.launchCount) { $0 += 1 } }
                }
            }
            try await group.waitForAll()
        }
        #expect(settings[.launchCount] == 2000)
        settings.close()
        #expect(try Settings(path: directory.database)[.launchCount] == 2000)
    }

    @Test("a transaction commits all its writes or, when it throws, none")
    func transactions() throws {
        struct Abort: Error {}
        let settings = Settings(inMemoryWith: .init())
        try settings.transaction { transaction in
            try transaction.set(1280, forKey: "window.width")
            try transaction.set(720, forKey: "window.height")
            #expect(transaction.value(forKey: "window.width") == 1280)
        }
        #expect(throws: Abort.self) {
            try settings.transaction { transaction in
                try transaction.set(1, forKey: "window.width")
                throw Abort()
            }
        }
        #expect(settings.snapshot() == ["window.width": 1280, "window.height": 720])
        #expect(settings.sequence == 2)
    }

    @Test("keys are listed by prefix, sorted, without removed ones")
    func keysByPrefix() throws {
        let settings = Settings(inMemoryWith: .init())
        for key in ["b.2", "a.1", "b.1", "b.3", "c"] { try settings.set(true, forKey: key) }
        try settings.removeValue(forKey: "b.3")
        #expect(settings.keys(withPrefix: "b.") == ["b.1", "b.2"])
        #expect(settings.keys() == ["a.1", "b.1", "b.2", "c"])
    }

    @Test("reset removes every value and import restores a document in one change")
    func resetAndImport() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(1, forKey: "a")
        try settings.set(2, forKey: "b")
        let exported = settings.snapshot()
        try settings.reset()
        #expect(settings.snapshot().isEmpty)
        try settings.set(3, forKey: "c")
        try settings.importValues(exported, replacingExisting: true)
        #expect(settings.snapshot() == exported)
    }

    @Test("invalid key names are refused", arguments: ["", "bad\nkey", "nul\u{0}"])
    func invalidKeys(key: String) {
        let settings = Settings(inMemoryWith: .init())
        let error = #expect(throws: SettingsError.self) { try settings.set(1, forKey: key) }
        #expect(error?.code == .invalidKey)
        #expect(settings.sequence == 0)
    }

    @Test("the database and its folders are created with private modes")
    func privateModes() throws {
        let path = directory.file("nested/deeper/settings.sqlite")
        _ = try Settings(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.file("nested/deeper"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
    }

    @Test("a closed store refuses writes but keeps answering reads")
    func closed() throws {
        let settings = try Settings(path: directory.database)
        try settings.set(1, forKey: "a")
        settings.close()
        #expect(settings.value(forKey: "a") == 1)
        let error = #expect(throws: SettingsError.self) { try settings.set(2, forKey: "a") }
        #expect(error?.code == .closed)
        #expect(try Settings(path: directory.database).value(forKey: "a") == 1)
    }
}
