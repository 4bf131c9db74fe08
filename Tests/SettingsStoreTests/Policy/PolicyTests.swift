import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// The example schema shipped in `Examples/schemas`.
let exampleSchemaDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Examples/schemas").path

/// A system folder (`defaults.d`, `locks.d`) built for a test.
struct SystemFolder {
    let directory: TemporaryDirectory
    var path: String { directory.file("etc") }

    init(_ directory: TemporaryDirectory, defaults: [String: String] = [:], locks: [String: String] = [:])
        throws
    {
        self.directory = directory
        try write(defaults: defaults, locks: locks)
    }

    /// Replaces the folder's files: `defaults` and `locks` map file names to contents.
    func write(defaults: [String: String], locks: [String: String]) throws {
        for (folder, files) in [("defaults.d", defaults), ("locks.d", locks)] {
            let folderPath = "\(path)/\(folder)"
            try? FileManager.default.removeItem(atPath: folderPath)
            try FileManager.default.createDirectory(atPath: folderPath, withIntermediateDirectories: true)
            for (name, text) in files {
                try text.write(toFile: "\(folderPath)/\(name)", atomically: true, encoding: .utf8)
            }
        }
    }

    func policy(strict: Bool = false) throws -> SettingsPolicy {
        try SettingsPolicy.load(
            schemaDirectories: [exampleSchemaDirectory], systemDirectory: path, isStrict: strict,
            extensions: .gnome)
    }
}

@Suite("Schemas, system defaults and locks in the library", .timeLimit(.minutes(2)))
struct PolicyTests {
    let directory = TemporaryDirectory()

    private func store(_ policy: SettingsPolicy) -> Settings {
        var configuration = SettingsConfiguration()
        configuration.policy = policy
        return Settings(inMemoryWith: configuration)
    }

    @Test("the example schema gives types, defaults, ranges, choices, lengths and scopes")
    func schemaRules() throws {
        let settings = store(try SystemFolder(directory).policy())
        #expect(settings.value(forKey: "audio.volume") == 0.5)
        #expect(
            settings.source(ofKey: "audio.volume")
                == .schemaDefault(file: "\(exampleSchemaDirectory)/example.json"))
        try settings.set(0.8, forKey: "audio.volume")
        try settings.set(1, forKey: "audio.volume")  // an integer is a fine double
        let cases: [(String, SettingValue, String)] = [
            ("audio.volume", 1.5, "must be at most 1"),
            ("audio.volume", "loud", "must be double, not string"),
            ("ui.theme", "blue", "must be one of 'light', 'dark'"), ("ui.font.size", 3, "must be at least 6"),
            ("app.name", .string(String(repeating: "x", count: 41)), "over the maximum length of 40"),
        ]
        for (key, value, message) in cases {
            let error = #expect(throws: SettingsError.self) { try settings.set(value, forKey: key) }
            #expect(error?.code == .schemaViolation)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("example.json") == true)
            #expect(error?.key == key)
        }
        try settings.set(["x": 1], forKey: "window.main.frame")  // `any`, by pattern
        try settings.set("free", forKey: "undeclared.key")  // not strict
        #expect(settings.policy.isLocal("window.main.frame"))
    }

    @Test("strict schemas refuse undeclared keys; two files declaring one key with two types fail to load")
    func strictAndConflicts() throws {
        let strict = store(try SystemFolder(directory).policy(strict: true))
        let error = #expect(throws: SettingsError.self) { try strict.set(1, forKey: "undeclared") }
        #expect(error?.code == .schemaViolation)
        // A key stored before schemas became strict can still be deleted, one by one or by reset.
        let legacy = store(try SystemFolder(directory).policy())
        try legacy.set("old", forKey: "legacy.a")
        try legacy.set("old", forKey: "legacy.b")
        legacy.apply(try SystemFolder(directory).policy(strict: true))
        #expect(throws: SettingsError.self) { try legacy.set("new", forKey: "legacy.a") }
        try legacy.removeValue(forKey: "legacy.a")
        try legacy.reset()
        #expect(legacy.keys().isEmpty)
        let folder = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: "\(exampleSchemaDirectory)/example.json", toPath: "\(folder)/a.json")
        try #"{"format": "settingsd-schema", "version": 1, "keys": {"audio.volume": {"type": "string"}}}"#
            .write(
                toFile: "\(folder)/b.json", atomically: true, encoding: .utf8)
        let conflict = #expect(throws: SettingsError.self) {
            try SettingsPolicy.load(schemaDirectories: [folder], systemDirectory: nil, extensions: .gnome)
        }
        #expect(conflict?.message.contains("a.json") == true)
        #expect(conflict?.message.contains("b.json") == true)
    }

    @Test("layers: a system default beats the schema default, the user's value beats both, a lock beats all")
    func layers() throws {
        let system = try SystemFolder(
            directory, defaults: ["10-site.json": #"{"ui.theme": "dark", "audio.volume": 0.3}"#],
            locks: ["audio": "# the volume is managed\naudio.volume\n"])
        let settings = store(try system.policy())
        #expect(settings.value(forKey: "ui.theme") == "dark")
        #expect(
            settings.source(ofKey: "ui.theme")
                == .systemDefault(file: "\(system.path)/defaults.d/10-site.json"))
        try settings.set("light", forKey: "ui.theme")
        #expect(settings.source(ofKey: "ui.theme") == .user)
        #expect(settings.value(forKey: "audio.volume") == 0.3)
        let error = #expect(throws: SettingsError.self) { try settings.set(0.9, forKey: "audio.volume") }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("locks.d/audio") == true)
        #expect(throws: SettingsError.self) { try settings.removeValue(forKey: "audio.volume") }
        #expect(settings.source(ofKey: "audio.volume") == .locked(file: "\(system.path)/locks.d/audio"))
        try settings.reset()  // skips the locked key
    }

    @Test("a lock applied while an owner observes the key announces the new effective value as system")
    func lockWhileObserving() throws {
        let system = try SystemFolder(directory)
        let settings = store(try system.policy())
        try settings.set(0.9, forKey: "audio.volume")
        let seen = Mutex<[SettingsChange]>([])
        let token = settings.observe(.keys(["audio.volume"])) { change in seen.withLock { $0.append(change) }
        }
        defer { token.cancel() }
        try system.write(defaults: ["site.json": #"{"audio.volume": 0.25}"#], locks: ["site": "audio.\n"])
        settings.apply(try system.policy())
        #expect(settings.value(forKey: "audio.volume") == 0.25)
        let change = try #require(seen.withLock { $0.last })
        #expect(change.reason == .system)
        #expect(change.changes.first?.value == 0.25)
        // Unlocked again: the user's stored value comes back.
        try system.write(defaults: [:], locks: [:])
        settings.apply(try system.policy())
        #expect(settings.value(forKey: "audio.volume") == 0.9)
        #expect(seen.withLock { $0.count } == 2)
    }

    @Test(
        "arrivals: schema breaks are refused as schemaViolation, local keys stay local, locked keys are kept quietly"
    )
    func arrivals() async throws {
        let system = try SystemFolder(directory, locks: ["ui": "ui.theme\n"])
        let strictish = store(try system.policy())
        let free = Settings(inMemoryWith: .init())
        let events = Mutex<[SettingsChange]>([])
        let token = strictish.observe(.all) { change in events.withLock { $0.append(change) } }
        defer { token.cancel() }
        try free.set(7.5, forKey: "audio.volume")  // out of range for the schema
        try free.set("dark", forKey: "ui.theme")  // locked there
        try free.set(["x": 0], forKey: "window.remote")  // local there: never taken
        try free.set(true, forKey: "plain")
        try strictish.set(["x": 1], forKey: "window.mine")  // local: never sent
        let link = InProcessLink(strictish, free)
        try await waitUntil { strictish.value(forKey: "plain") == true }
        try await Task.sleep(for: .milliseconds(100))
        #expect(strictish.value(forKey: "audio.volume") == 0.5)
        #expect(
            events.withLock { $0.contains { $0.reason == .schemaViolation && $0.keys == ["audio.volume"] } })
        #expect(strictish.entry(forKey: "ui.theme")?.value == "dark")  // kept for other machines
        #expect(strictish.value(forKey: "ui.theme") == "light")  // but the lock holds here
        #expect(!events.withLock { $0.contains { $0.keys.contains("ui.theme") } })
        #expect(strictish.entry(forKey: "window.remote") == nil)
        #expect(free.entry(forKey: "window.mine") == nil)
        link.disconnect()
    }
}

@Suite("@Setting properties under a lock", .timeLimit(.minutes(2)))
struct LockedOwnerTests {
    let directory = TemporaryDirectory()

    @Test("a locked key reads the locked value; a write is refused through onError and changes nothing")
    func lockedProperty() throws {
        let system = try SystemFolder(
            directory, defaults: ["site.json": #"{"display.brightness": 0.4}"#],
            locks: ["display": "display.brightness\n"])
        let errors = Mutex<[SettingsError]>([])
        var configuration = SettingsConfiguration(onError: { error in errors.withLock { $0.append(error) } })
        configuration.policy = try system.policy()
        let settings = Settings(inMemoryWith: configuration)
        let model = DisplayModel(store: settings)
        #expect(model.brightness == 0.4)
        model.brightness = 0.9
        #expect(model.brightness == 0.4)
        #expect(errors.withLock { $0.map(\.code) } == [.locked])
        model.contrast = 0.7  // unlocked keys are unaffected
        #expect(model.contrast == 0.7)
    }
}
