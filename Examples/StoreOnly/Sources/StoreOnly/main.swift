import Foundation
import SettingsStore

// Typed keys, declared once, with their defaults.
extension SettingKey where Value == Double {
    static let volume = SettingKey<Double>("audio.volume", default: 0.5)
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-only-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

let settings = try Settings(path: folder.appendingPathComponent("settings.sqlite").path)
let changes = Counter()
let token = settings.observe(.keys(["audio.volume"])) { _ in changes.add() }
print("volume before: \(settings[.volume])")
try settings.set(0.8, for: .volume)
try settings.transaction { transaction in try transaction.set("dark", forKey: "ui.theme") }
print("volume after: \(settings[.volume]), theme: \(settings.value(forKey: "ui.theme") ?? "none")")
settings.close()
let reopened = try Settings(path: folder.appendingPathComponent("settings.sqlite").path)
guard reopened[.volume] == 0.8, changes.value == 1 else {
    print("the store did not keep its value")
    exit(1)
}
print("kept across reopening: \(reopened[.volume]); \(changes.value) change event")
token.cancel()

/// Counts change events from the store's thread.
final class Counter: @unchecked Sendable {  // guarded by its lock
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
