import Foundation
import SettingsFoundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// What Foundation's tests do not check: other processes, durability, suites, locks, notifications.
@Suite("SettingsDefaults: other processes, durability, suites and administrators")
struct SettingsDefaultsTests {
    /// Records the change notifications posted for `object`.
    final class Recorder: @unchecked Sendable {  // every access is under `lock`
        private let lock = NSLock()
        private var notes: [(keys: [String], reason: String?)] = []
        private var token: (any NSObjectProtocol)?

        init(_ name: Notification.Name, object: AnyObject, keys: String, reason: String) {
            token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) {
                [weak self] note in
                let entry = (note.userInfo?[keys] as? [String] ?? [], note.userInfo?[reason].map { "\($0)" })
                self?.lock.withLock { self?.notes.append(entry) }
            }
        }

        deinit { token.map(NotificationCenter.default.removeObserver) }

        var all: [(keys: [String], reason: String?)] { lock.withLock { notes } }
    }

    private static func recorder(_ defaults: SettingsDefaults) -> Recorder {
        Recorder(
            UserDefaults.didChangeNotification, object: defaults, keys: SettingsDefaults.changedKeysKey,
            reason: SettingsDefaults.changeReasonKey)
    }

    @Test("a write by another process (the CLI, through the daemon) arrives, with its notification")
    func otherProcessWrites() async throws {
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(directory)
        let store = Settings(inMemoryWith: .init())
        let link = Replicator(settings: store).sync(with: daemon.socket)
        defer { link.stop() }
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "demo"))
        let notes = Self.recorder(defaults)
        // Connected first: a key written before the link met the daemon arrives as `initialSync`.
        try await waitUntil { link.isConnected }
        #expect(daemon.cli("set", "suite.demo/greeting", "hello").status == 0)
        try await waitUntil { defaults.string(forKey: "greeting") == "hello" }
        try await waitUntil { notes.all.contains { $0.keys == ["greeting"] && $0.reason == "replica" } }
        defaults.set(7, forKey: "count")
        try await waitUntil { daemon.cli("get", "suite.demo/count").output == "7\n" }
        #expect(notes.all.contains { $0.keys == ["count"] && $0.reason == "local" })
        // Another suite's key posts nothing for this suite: the next note is the marker's after it.
        let posted = notes.all.count
        #expect(daemon.cli("set", "suite.other/greeting", "no").status == 0)
        #expect(daemon.cli("set", "suite.demo/marker", "1").status == 0)
        try await waitUntil { notes.all.contains { $0.keys == ["marker"] } }
        #expect(notes.all.dropFirst(posted).map(\.keys) == [["marker"]])
        #expect(store.value(forKey: "suite.other/greeting") == .string("no"))
        #expect(defaults.string(forKey: "greeting") == "hello")
    }

    @Test("a value set with no synchronize() survives SIGKILL of the process that set it")
    func survivesKill() async throws {
        let directory = TemporaryDirectory()
        let binary = Self.example
        let environment = Self.exampleEnvironment(in: directory)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: binary)
        writer.arguments = ["set", "greeting", "hello from a killed process", "--hold"]
        writer.environment = environment
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) == "set\n")
        kill(writer.processIdentifier, SIGKILL)
        writer.waitUntilExit()
        let read = DaemonProcess.run(["get", "greeting"], environment: environment, through: binary)
        #expect(read.output == "hello from a killed process\n", "\(read.error)")
    }

    @Test("two suites of one store never see each other's keys; dictionaryRepresentation is the suite's")
    func suitesAreApart() throws {
        let store = Settings(inMemoryWith: .init())
        let a = try #require(SettingsDefaults(settings: store, suiteName: "a"))
        let b = try #require(SettingsDefaults(settings: store, suiteName: "b"))
        a.set("in a", forKey: "shared")
        b.register(defaults: ["shared": "b's default", "only": 1])
        #expect(b.string(forKey: "shared") == "b's default")
        #expect(a.string(forKey: "shared") == "in a")
        b.set("in b", forKey: "shared")
        #expect(a.string(forKey: "shared") == "in a")
        #expect(store.value(forKey: "suite.a/shared") == "in a")
        #expect(store.value(forKey: "suite.b/shared") == "in b")
        let representation = b.dictionaryRepresentation()
        #expect(representation["shared"] as? String == "in b")
        #expect(representation["only"] as? Int == 1)
        #expect(representation.count == 2)
        #expect(a.persistentDomain(forName: "b")?["shared"] as? String == "in b")
        #expect(a.persistentDomain(forName: "b")?["only"] == nil, "registered defaults are not persistent")
    }

    @Test("suites whose names extend one another (and processes a and a.b) keep apart, removal included")
    func nestedSuiteNamesAreApart() throws {
        let store = Settings(inMemoryWith: .init())
        let outer = try #require(SettingsDefaults(settings: store, suiteName: "group.com.example"))
        let inner = try #require(SettingsDefaults(settings: store, suiteName: "group.com.example.shared"))
        outer.set("outer", forKey: "k")
        inner.set("inner", forKey: "k")
        #expect(outer.dictionaryRepresentation().count == 1)
        #expect(outer.persistentDomain(forName: "group.com.example")?.keys.sorted() == ["k"])
        outer.removeObject(forKey: "shared.k")
        outer.removePersistentDomain(forName: "group.com.example")
        #expect(inner.string(forKey: "k") == "inner")
        #expect(outer.string(forKey: "k") == nil)
        #expect(SettingsDefaults.prefix(forSuite: "a/b%c") == "suite.a%2Fb%25c/")
    }

    @Test("a cyclic or 200,000-deep property list is refused with a reason, and the process lives")
    func hostileValuesAreRefused() throws {
        let store = Settings(inMemoryWith: .init())
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "hostile"))
        let cycle = NSMutableArray()
        cycle.add(cycle)
        defaults.set(cycle, forKey: "cycle")
        // Built and freed on a thread with a large stack: releasing 200,000 nested arrays recurses
        // in the Swift runtime itself, whatever settingsd does with them.
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var deep: Any = 1
            for _ in 0..<200_000 { deep = [deep] }
            SettingsDefaults(settings: store, suiteName: "hostile")?.set(deep, forKey: "deep")
            done.signal()
        }
        thread.stackSize = 1 << 30
        thread.start()
        done.wait()
        var fits: Any = 1
        for _ in 0..<SettingValue.maximumNestingDepth { fits = [fits] }
        defaults.set(fits, forKey: "fits")
        #expect(defaults.object(forKey: "cycle") == nil)
        #expect(defaults.object(forKey: "deep") == nil)
        #expect(defaults.object(forKey: "fits") != nil)
    }

    @Test("a key an administrator locked is forced: it reads the locked value and refuses writes")
    func lockedKeysAreForced() throws {
        let directory = TemporaryDirectory()
        let system = try SystemFolder(
            directory, defaults: ["managed.json": #"{"suite.managed/homepage": "https://intranet"}"#],
            locks: ["managed": "suite.managed/homepage\n"])
        var configuration = SettingsConfiguration()
        configuration.policy = try system.policy()
        let store = Settings(inMemoryWith: configuration)
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "managed"))
        #expect(defaults.objectIsForced(forKey: "homepage"))
        #expect(!defaults.objectIsForced(forKey: "other"))
        #expect(defaults.objectIsForced(forKey: "homepage", inDomain: "managed"))
        #expect(!defaults.objectIsForced(forKey: "homepage", inDomain: "elsewhere"))
        defaults.set("https://example.org", forKey: "homepage")
        #expect(defaults.string(forKey: "homepage") == "https://intranet")
    }

    @Test("local writes notify at once with their keys; values of every property-list type round-trip")
    func localWritesAndTypes() throws {
        let store = Settings(inMemoryWith: .init())
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "types"))
        let notes = Self.recorder(defaults)
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        defaults.set(true, forKey: "bool")
        defaults.set(42, forKey: "int")
        defaults.set(2.5, forKey: "double")
        defaults.set("text", forKey: "string")
        defaults.set(Data([1, 2]), forKey: "data")
        defaults.set(date, forKey: "date")
        defaults.set([1, "two", [3.5]] as [Any], forKey: "array")
        defaults.set(["k": ["nested": true]] as [String: Any], forKey: "dictionary")
        defaults.set(URL(fileURLWithPath: "/tmp/file"), forKey: "url")
        #expect(
            notes.all.map(\.keys) == [
                ["bool"], ["int"], ["double"], ["string"], ["data"], ["date"], ["array"], ["dictionary"],
                ["url"],
            ])
        #expect(defaults.object(forKey: "bool") as? Bool == true)
        #expect(defaults.integer(forKey: "int") == 42)
        #expect(defaults.double(forKey: "double") == 2.5)
        #expect(defaults.data(forKey: "data") == Data([1, 2]))
        #expect(defaults.object(forKey: "date") as? Date == date)
        #expect((defaults.array(forKey: "array")?[1] as? String) == "two")
        #expect(
            ((defaults.dictionary(forKey: "dictionary")?["k"] as? [String: Any])?["nested"] as? Bool) == true)
        #expect(defaults.url(forKey: "url") == URL(fileURLWithPath: "/tmp/file"))
        defaults.removeObject(forKey: "int")
        #expect(defaults.object(forKey: "int") == nil)
        #expect(defaults.synchronize())
        // What is not a property-list value is refused with a reason; nothing is written.
        defaults.set(NSObject(), forKey: "object")
        #expect(defaults.object(forKey: "object") == nil)
    }
}

extension SettingsDefaultsTests {
    @Test(
        "the key-value store through the hub warns when it shares the login role's namespace, not with its own"
    )
    func ubiquitousNamespaceWarning() throws {
        let directory = TemporaryDirectory()
        let binary = Self.example
        var environment = Self.exampleEnvironment(in: directory)
        // No server answers there: the warning is about the configuration, before any connection.
        environment["SETTINGSD_UBIQUITOUS_HUB"] = "host=\(directory.file("no-pg")) user=alice dbname=settings"
        let shared = DaemonProcess.run([], environment: environment, through: binary)
        #expect(shared.error.contains("give the app a namespace of its own"), "\(shared.error)")
        environment["SETTINGSD_UBIQUITOUS_NAMESPACE"] = "alice_app"
        let own = DaemonProcess.run([], environment: environment, through: binary)
        #expect(!own.error.contains("namespace of its own"), "\(own.error)")
    }
}

extension SettingsDefaultsTests {
    /// `Examples/AppleStyle`, built beside `settingsd`.
    static var example: String {
        URL(fileURLWithPath: SettingsdBinary.path).deletingLastPathComponent()
            .appendingPathComponent("apple-style-example").path
    }

    /// The example's environment: its own store in `directory`, no daemon.
    static func exampleEnvironment(in directory: TemporaryDirectory) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SETTINGSD_APP_DB"] = directory.file("app.sqlite")
        environment["SETTINGSD_SOCKET"] = directory.file("no-daemon.sock")
        environment["XDG_DATA_HOME"] = directory.file("data")
        return environment
    }
}
