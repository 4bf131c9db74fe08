import Foundation
import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// Keys and values drawn from the edges the rules care about, for model-based and closure tests.
struct SettingsCorpus {
    var generator: SeededGenerator

    /// Keys: Unicode normalisation twins, case twins, prefix-sharing chains, the longest allowed.
    static let keys: [String] = [
        "caf\u{E9}", "cafe\u{301}", "caf\u{E9}.size", "cafe\u{301}.size", "Key", "key", "KEY",
        "a", "a.b", "a.b.c", "a.bc", "\u{212B}ngstr\u{F6}m", "\u{C5}ngstro\u{308}m", "emoji.\u{1F600}",
        String(repeating: "k", count: SettingsLimits.desktop.maximumKeyBytes),
        String(repeating: "\u{E9}", count: SettingsLimits.desktop.maximumKeyBytes / 2),
    ]

    /// Values at every limit: depth, size, integer edges, non-finite and signed-zero doubles,
    /// data, dates, nested dictionaries with tag-like keys, strings that need escaping.
    static let values: [SettingValue] = {
        var deepest = SettingValue.data(Data([0, 255]))
        for level in 0..<SettingValue.maximumNestingDepth {
            deepest =
                level.isMultiple(of: 2) ? .dictionary(["$t": deepest]) : .array([deepest, .bool(false)])
        }
        return [
            .bool(true), .bool(false), .integer(.min), .integer(.max), .integer(0), .integer(-1),
            .double(0.1), .double(-0.0), .double(0.0), .double(.nan), .double(.infinity),
            .double(-.infinity), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
            .string(""), .string("caf\u{E9}"), .string("cafe\u{301}"), .string("line\nbreak\t\"quoted\"\\"),
            .string("\u{0}\u{1}\u{1F}\u{7F}"), .string(String(repeating: "\u{1}", count: 100_000)),
            .data(Data()), .data(Data((0...255).map(UInt8.init))),
            .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: -1e10)),
            .date(Date(timeIntervalSince1970: 1_764_420_000.123_456)),
            .date(Date(timeIntervalSinceReferenceDate: -0.0)),
            .date(Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude)),
            .date(Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude)),
            .array([]), .dictionary([:]), .dictionary(["$data": "not data"]),
            .dictionary(["$dict": .dictionary([:])]),
            .dictionary(["caf\u{E9}": 1, "x": ["nested": [1, 2.5, "three"]]]), deepest,
            .string(String(repeating: "x", count: (1 << 20) - 8)),
        ]
    }()

    /// `count` dates with random bit patterns (every finite double is a date the store keeps).
    static func randomDates(_ count: Int, seed: UInt64) -> [SettingValue] {
        var generator = SeededGenerator(seed: seed)
        var dates: [SettingValue] = []
        while dates.count < count {
            let seconds = Double(bitPattern: generator.next())
            if seconds.isFinite { dates.append(.date(Date(timeIntervalSinceReferenceDate: seconds))) }
        }
        return dates
    }

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func key() -> String {
        Self.keys[Int.random(in: 0..<Self.keys.count, using: &generator)]
    }

    mutating func value() -> SettingValue {
        // The largest values are costly to move around: drawn less often.
        let index = Int.random(in: 0..<Self.values.count + 20, using: &generator)
        if index < Self.values.count { return Self.values[index] }
        return .integer(Int64.random(in: -1000...1000, using: &generator))
    }

    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &generator) < percent
    }
}

/// A key's identity as the tests see it, computed with Foundation's own NFC (not the store's).
func modelKey(_ key: String) -> [UInt8] {
    Array(key.precomposedStringWithCanonicalMapping.utf8)
}
