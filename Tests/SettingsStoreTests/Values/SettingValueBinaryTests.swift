import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Stored binary form of values", .timeLimit(.minutes(2)))
struct SettingValueBinaryTests {
    static let samples: [SettingValue] = [
        true, false, 0, 42, .integer(.min), .integer(.max), 0.1, -0.0, .double(.infinity), 1e-300,
        "", "héllo 👋", .data(Data()), .data(Data([0, 1, 2, 255])),
        .date(Date(timeIntervalSince1970: 1_700_000_000.123)),
        .date(Date(timeIntervalSinceReferenceDate: -1e9)),
        [], [1, "two", 3.0, [false]], [:], ["a": 1, "b": ["c": .data(Data([9]))]],
    ]

    @Test("every sample decodes to an equal value and its size is what it counts", arguments: samples)
    func roundTrip(value: SettingValue) throws {
        let bytes = value.encoded()
        let decoded = try bytes.withUnsafeBytes { try SettingValue(decoding: $0) }
        #expect(decoded == value)
        #expect(decoded.kind == value.kind)
        #expect(value.storageSize == bytes.count)
    }

    @Test("an integer stays an integer and a double stays a double")
    func numbersKeepTheirKind() throws {
        let one = try SettingValue.integer(1).encoded().withUnsafeBytes { try SettingValue(decoding: $0) }
        let oneDouble = try SettingValue.double(1).encoded().withUnsafeBytes {
            try SettingValue(decoding: $0)
        }
        #expect(one == .integer(1))
        #expect(oneDouble == .double(1))
    }

    @Test("equal dictionaries encode to equal bytes")
    func canonicalDictionaries() {
        var first: [String: SettingValue] = [:]
        var second: [String: SettingValue] = [:]
        for index in 0..<50 { first["k\(index)"] = .integer(Int64(index)) }
        for index in (0..<50).reversed() { second["k\(index)"] = .integer(Int64(index)) }
        #expect(SettingValue.dictionary(first).encoded() == SettingValue.dictionary(second).encoded())
    }

    @Test(
        "malformed bytes are refused with a clear error",
        arguments: [
            [UInt8](), [0x00], [0xFF], [0x03, 1, 2], [0x05, 0x05, 0x61], [0x05, 0x02, 0xC3, 0x28],
            [0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], [0x08, 0x7F], [0x01, 0x01],
        ])
    func malformed(bytes: [UInt8]) {
        #expect(throws: SettingsError.self) {
            try bytes.withUnsafeBytes { try SettingValue(decoding: $0) }
        }
    }

    @Test("nesting deeper than the limit is refused, not a stack overflow")
    func deepNesting() {
        let bytes = Array(Array(repeating: [0x08, 0x01] as [UInt8], count: 10_000).joined()) + [0x01]
        let error = #expect(throws: SettingsError.self) {
            try bytes.withUnsafeBytes { try SettingValue(decoding: $0) }
        }
        #expect(error?.code == .corruptDatabase)
    }
}
