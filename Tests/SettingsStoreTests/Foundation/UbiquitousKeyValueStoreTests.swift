import Foundation
import Observation
import SettingsFoundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A model as SwiftUI apps of recent years write one: on the main actor, it mirrors a key of the
/// key-value store and updates it when another device writes (notifications on the main queue).
@MainActor @Observable final class CloudThemeModel {
    var theme: String
    var lastReason: Int?
    var lastKeys: [String] = []
    @ObservationIgnored nonisolated(unsafe) private var token: (any NSObjectProtocol)?  // set once, in init

    init(store: NSUbiquitousKeyValueStore) {
        theme = store.string(forKey: "theme") ?? "light"
        token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: .main
        ) { [weak self] note in
            let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
            let reason = note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int
            let theme = store.string(forKey: "theme")
            MainActor.assumeIsolated { self?.apply(keys: keys, reason: reason, theme: theme) }
        }
    }

    private func apply(keys: [String], reason: Int?, theme: String?) {
        lastKeys = keys
        lastReason = reason
        if keys.contains("theme"), let theme { self.theme = theme }
    }
}

@Suite("NSUbiquitousKeyValueStore on replicas: external changes only, with Apple's reasons")
struct UbiquitousKeyValueStoreTests {
    @Test("another replica's write is announced with reason 0 and its keys; the store's own writes are not")
    @MainActor func serverChanges() async throws {
        let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
        let storeA = NSUbiquitousKeyValueStore(settings: a, notificationQueue: nil)
        let storeB = NSUbiquitousKeyValueStore(settings: b)
        let seenA = SettingsDefaultsTests.Recorder(
            NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: storeA,
            keys: NSUbiquitousKeyValueStoreChangedKeysKey, reason: NSUbiquitousKeyValueStoreChangeReasonKey)
        let link = InProcessLink(a, b)
        defer { link.disconnect() }
        try await waitForConvergence([a, b])
        let model = CloudThemeModel(store: storeB)
        storeA.set("dark", forKey: "theme")
        storeA.set(Int64(3), forKey: "level")
        let deadline = Date().addingTimeInterval(10)
        while model.theme != "dark" || storeB.longLong(forKey: "level") != 3, Date() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(model.theme == "dark")
        #expect(model.lastReason == NSUbiquitousKeyValueStoreServerChange)
        #expect(storeB.longLong(forKey: "level") == 3)
        #expect(seenA.all.isEmpty, "the store's own writes were announced as external")
    }

    @Test(
        "the first sync brings values with reason 1; a change over iCloud's limits is refused with reason 2")
    func initialSyncAndQuota() async throws {
        let a = Settings(inMemoryWith: .init())
        try a.set("dark", forKey: "theme")
        let long = String(repeating: "k", count: 100)
        var limited = SettingsConfiguration()
        limited.limits = .iCloud
        let b = Settings(inMemoryWith: limited)
        let storeB = NSUbiquitousKeyValueStore(settings: b, notificationQueue: nil)
        let seen = SettingsDefaultsTests.Recorder(
            NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: storeB,
            keys: NSUbiquitousKeyValueStoreChangedKeysKey, reason: NSUbiquitousKeyValueStoreChangeReasonKey)
        let link = InProcessLink(a, b)
        defer { link.disconnect() }
        try await waitUntil { seen.all.contains { $0.keys == ["theme"] && $0.reason == "1" } }
        try a.set("too long a key for iCloud", forKey: long)
        try await waitUntil { seen.all.contains { $0.keys == [long] && $0.reason == "2" } }
        #expect(storeB.object(forKey: long) == nil)
        // Writing over the limit here is refused too, and nothing is stored.
        storeB.set("x", forKey: long)
        #expect(storeB.object(forKey: long) == nil)
    }

    @Test("typed getters read what Apple's do; synchronize is true; dictionaryRepresentation holds every key")
    func typedGetters() {
        let store = NSUbiquitousKeyValueStore(
            settings: Settings(inMemoryWith: .init()), notificationQueue: nil)
        store.set(3.9, forKey: "double")
        store.set(true, forKey: "bool")
        store.set(Int64(7), forKey: "integer")
        store.set(["a", "b"] as [Any], forKey: "array")
        store.set(["k": 1] as [String: Any], forKey: "dictionary")
        store.set(Data([9]), forKey: "data")
        store.set("text", forKey: "string")
        #expect(store.longLong(forKey: "double") == 3)
        #expect(store.double(forKey: "integer") == 7)
        #expect(store.bool(forKey: "integer"))
        #expect(store.longLong(forKey: "bool") == 1)
        #expect(store.array(forKey: "array") as? [String] == ["a", "b"])
        #expect(store.dictionary(forKey: "dictionary")?["k"] as? Int == 1)
        #expect(store.data(forKey: "data") == Data([9]))
        #expect(store.string(forKey: "integer") == nil)
        #expect(store.dictionaryRepresentation.count == 7)
        store.removeObject(forKey: "string")
        #expect(store.string(forKey: "string") == nil)
        #expect(store.synchronize())
    }

    @Test("by default, notifications wait for the main queue, as Apple posts them")
    @MainActor func mainQueue() async throws {
        let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
        let storeB = NSUbiquitousKeyValueStore(settings: b)
        let posted = NotificationCount()
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: storeB, queue: nil
        ) { _ in posted.increment() }
        defer { NotificationCenter.default.removeObserver(token) }
        let link = InProcessLink(a, b)
        defer { link.disconnect() }
        try a.set("dark", forKey: "theme")
        let deadline = Date().addingTimeInterval(10)
        while posted.value == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(posted.value >= 1)
    }
}
