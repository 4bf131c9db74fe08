import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

struct WindowLayout: Codable, Equatable, SettingValueConvertible {
    var width: Int
    var height: Int
    var title: String?
    var opened: Date
    var thumbnail: Data
    var tags: [String]
    var scale: Double
}

enum Quality: Int, SettingValueConvertible {
    case low = 1
    case high = 2
}

@Suite("Conversions between Swift types and stored values", .timeLimit(.minutes(2)))
struct ConversionTests {
    let directory = TemporaryDirectory()

    /// Writes `value`, reopens the database and reads it back.
    func roundTrip<Value: SettingValueConvertible>(_ value: Value) throws -> Value? {
        do {
            let settings = try Settings(path: directory.database)
            try settings.set(value, forKey: "value")
        }
        let reopened = try Settings(path: directory.database)
        return try reopened.value(forKey: "value", as: Value.self)
    }

    @Test("scalars round-trip through a reopen")
    func scalars() throws {
        #expect(try roundTrip(true) == true)
        #expect(try roundTrip(Int.min) == Int.min)
        #expect(try roundTrip(Int8(-7)) == -7)
        #expect(try roundTrip(UInt32.max) == UInt32.max)
        #expect(try roundTrip(0.1) == 0.1)
        #expect(try roundTrip(Float(0.1)) == Float(0.1))
        #expect(try roundTrip("tab\tand ünïcödé") == "tab\tand ünïcödé")
        #expect(try roundTrip(Data([0, 0, 7])) == Data([0, 0, 7]))
    }

    @Test("a date keeps at least millisecond precision")
    func dates() throws {
        let date = Date(timeIntervalSince1970: 1_767_225_600.123)
        let read = try #require(try roundTrip(date))
        #expect(abs(read.timeIntervalSince(date)) < 0.000_001)
    }

    @Test("URL and UUID are stored as strings and read back")
    func urlAndUUID() throws {
        let url = URL(string: "https://example.org/a?b=c")!
        let uuid = UUID()
        #expect(try roundTrip(url) == url)
        #expect(try roundTrip(uuid) == uuid)
    }

    @Test("arrays and string-keyed dictionaries round-trip")
    func collections() throws {
        #expect(try roundTrip([1, 2, 3]) == [1, 2, 3])
        #expect(try roundTrip(["a": [true], "b": []]) == ["a": [true], "b": []])
    }

    @Test("raw-representable enums store their raw values")
    func rawRepresentable() throws {
        #expect(try roundTrip(Theme.dark) == .dark)
        #expect(try roundTrip(Quality.high) == .high)
        #expect(Theme.dark.settingValue() == .string("dark"))
        #expect(Quality.high.settingValue() == .integer(2))
    }

    @Test("a Codable type is stored as a structured dictionary with native dates and data")
    func codable() throws {
        let layout = WindowLayout(
            width: 800, height: 600, title: nil, opened: Date(timeIntervalSince1970: 100),
            thumbnail: Data([1]),
            tags: ["main"], scale: 1.5)
        let stored = try #require(try layout.settingValue())
        #expect(
            stored == [
                "width": 800, "height": 600, "opened": .date(Date(timeIntervalSince1970: 100)),
                "thumbnail": .data(Data([1])), "tags": ["main"], "scale": 1.5,
            ])
        #expect(try roundTrip(layout) == layout)
    }

    @Test("a Codable value of the wrong shape gives a type mismatch naming the key")
    func codableMismatch() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(["width": "wide"] as SettingValue, forKey: "layout")
        let error = #expect(throws: SettingsError.self) {
            try settings.value(forKey: "layout", as: WindowLayout.self)
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.key == "layout")
        #expect(error?.message.contains("'layout'") == true)
    }

    @Test("an optional nil removes the key")
    func optionalNilRemoves() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set("Ada", for: .userName)
        #expect(settings[.userName] == "Ada")
        try settings.set(nil, for: .userName)
        #expect(settings[.userName] == nil)
        #expect(!settings.containsValue(for: .userName))
    }

    @Test("a wrong-type read throws a typed error or returns the default, and is reported")
    func wrongType() throws {
        let reported = ReportedErrors()
        let settings = Settings(inMemoryWith: .init(onError: { reported.append($0) }))
        try settings.set("loud", forKey: "audio.volume")
        let error = #expect(throws: SettingsError.self) { try settings.value(for: .volume) }
        #expect(error?.description == "type mismatch for 'audio.volume': stored string, expected Double")
        #expect(settings[.volume] == 0.5)
        #expect(reported.codes == [.typeMismatch])
    }

    @Test("integers out of the target's range do not read as garbage")
    func integerRange() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set(300, forKey: "small")
        #expect(throws: SettingsError.self) { try settings.value(forKey: "small", as: Int8.self) }
        #expect(throws: SettingsError.self) { try settings.set(UInt64.max, forKey: "huge") }
        #expect(try settings.value(forKey: "small", as: Double.self) == 300)
    }
}

/// Collects errors reported from any thread.
final class ReportedErrors: Sendable {
    private let errors = Mutex<[SettingsError]>([])

    func append(_ error: SettingsError) { errors.withLock { $0.append(error) } }
    var codes: [SettingsError.Code] { errors.withLock { $0.map(\.code) } }
}
