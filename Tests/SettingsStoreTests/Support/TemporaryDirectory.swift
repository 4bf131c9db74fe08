import Foundation

/// A fresh folder under the system temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(24)
        path = NSTemporaryDirectory() + "settingsd-tests-\(safe)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the folder.
    func file(_ name: String) -> String {
        path + "/" + name
    }

    /// The path of a database file inside the folder.
    var database: String { file("settings.sqlite") }
}
