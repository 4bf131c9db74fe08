import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("JSON parsing and writing", .timeLimit(.minutes(2)))
struct JSONTests {
    @Test("integers and doubles stay distinct")
    func numbers() throws {
        #expect(try JSONValue.parse("1") == .integer(1))
        #expect(try JSONValue.parse("1.0") == .double(1))
        #expect(try JSONValue.parse("-0.1e2") == .double(-10))
        #expect(try JSONValue.parse("-9223372036854775808") == .integer(.min))
        #expect(JSONValue.double(1).serialized() == "1.0")
        #expect(JSONValue.double(0.1).serialized() == "0.1")
        #expect(JSONValue.double(1e300).serialized() == "1e+300")
        for integer: Int64 in [0, 7, -7, 10, -10, 1_234_567_890, .max, .min, .max - 1, .min + 1] {
            #expect(JSONValue.integer(integer).serialized() == String(integer))
            #expect(try JSONValue.parse(JSONValue.integer(integer).serialized()) == .integer(integer))
        }
    }

    @Test("integers of every length read as Int64 reads them, or are refused past its range")
    func integerLengths() {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        for length in 1...21 {
            for sign in ["", "-"] {
                let digits = (0..<length).map { index in
                    index == 0 && length > 1
                        ? "123456789".randomElement(using: &generator)!
                        : "0123456789".randomElement(using: &generator)!
                }
                let text = sign + String(digits)
                let parsed = try? JSONValue.parse(text)
                #expect(parsed == Int64(text).map { .integer($0) }, "\(text)")
            }
        }
    }

    @Test("strings with escapes, surrogate pairs and Unicode round-trip")
    func strings() throws {
        let text = "quote \" backslash \\ newline \n tab \t nul \u{0} é 👋"
        let json = JSONValue.string(text).serialized()
        #expect(!json.contains("\n"))
        #expect(try JSONValue.parse(json) == .string(text))
        #expect(try JSONValue.parse(#""\ud83d\udc4b \u00e9""#) == .string("👋 é"))
        #expect(JSONValue.string("plain é 👋").serialized() == "\"plain é 👋\"")
        #expect(JSONValue.string("del \u{7F}").serialized() == #""del \u007f""#)
    }

    @Test(
        "a special byte at every place in a word is found: strings round-trip, raw control bytes are refused")
    func specialBytesAtEveryOffset() throws {
        let specials: [UInt8] = [0x00, 0x09, 0x0A, 0x1F, 0x22, 0x5C, 0x7F]
        for length in 1...19 {
            for place in 0..<length {
                for special in specials {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = special
                    let text = String(decoding: bytes, as: UTF8.self)
                    let json = JSONValue.string(text).serialized()
                    #expect(try JSONValue.parse(json) == .string(text), "\(bytes)")
                    #expect(json.utf8.count > length + 2, "\(bytes) was written unescaped")
                    // Raw in a document, a control byte is refused and the others are read as JSON reads them.
                    let raw = [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
                    let parsed = raw.withUnsafeBytes { try? JSONParser.parse($0) }
                    if special < 0x20 {
                        #expect(parsed == nil, "\(bytes)")
                    } else if special == 0x7F {
                        #expect(parsed == .string(text), "\(bytes)")
                    }
                    // The scan a word at a time agrees with one byte at a time, from every start.
                    bytes.withUnsafeBytes { buffer in
                        for start in 0...length {
                            let expected =
                                (start..<length).first { index in
                                    let byte = buffer[index]
                                    return byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F
                                } ?? length
                            #expect(buffer.firstJSONSpecial(from: start, includingDelete: true) == expected)
                        }
                    }
                }
            }
        }
        // Bytes past 0x7F (UTF-8) are never special, next to a special one or not.
        let wide = String(repeating: "é👋", count: 9)
        #expect(JSONValue.string(wide).serialized() == "\"\(wide)\"")
        #expect(
            try JSONValue.parse(JSONValue.string(wide + "\"" + wide).serialized())
                == .string(wide + "\"" + wide))
    }

    @Test("objects serialize with sorted keys")
    func sortedKeys() throws {
        let value = try JSONValue.parse(#"{"b": [1, {"d": true, "c": null}], "a": "x"}"#)
        #expect(value.serialized() == #"{"a":"x","b":[1,{"c":null,"d":true}]}"#)
    }

    @Test(
        "malformed input is refused with a protocol error",
        arguments: [
            "", " ", "{", "}", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", "1e", "tru", "nul",
            "\"abc",
            "\"\\x\"", "\"\\ud800\"", "\"a\u{01}b\"", "{} {}", "[1] x", "99999999999999999999", "1e999",
            "{1:2}",
        ])
    func malformed(text: String) {
        let error = #expect(throws: SettingsError.self) { try JSONValue.parse(text) }
        #expect(error?.code == .protocolError)
    }

    @Test("invalid UTF-8 is refused")
    func invalidUTF8() {
        #expect(throws: SettingsError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("nesting past 64 levels is refused, at 64 accepted")
    func depth() throws {
        _ = try JSONValue.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        #expect(throws: SettingsError.self) {
            try JSONValue.parse(
                String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
        }
    }

    @Test("every setting value round-trips through its JSON form", arguments: SettingValueBinaryTests.samples)
    func settingValues(value: SettingValue) throws {
        let text = value.json.serialized()
        let back = try SettingValue(jsonText: text)
        if case .date(let date) = value, case .date(let read) = back {
            #expect(abs(read.timeIntervalSince(date)) < 0.000_01)
        } else {
            #expect(back == value)
        }
    }

    @Test("tag-like dictionaries, data, dates and non-finite doubles keep their types")
    func taggedValues() throws {
        let values: [SettingValue] = [
            .dictionary(["$data": "not data"]), .data(Data([1, 2, 3])), .double(.infinity),
            .double(-.infinity),
        ]
        for value in values { #expect(try SettingValue(jsonText: value.json.serialized()) == value) }
        guard case .double(let nan) = try SettingValue(jsonText: SettingValue.double(.nan).json.serialized())
        else {
            Issue.record("NaN did not stay a double")
            return
        }
        #expect(nan.isNaN)
        #expect(throws: SettingsError.self) { try SettingValue(jsonText: #"{"$bogus": 1}"#) }
        #expect(throws: SettingsError.self) { try SettingValue(jsonText: "null") }
    }
}
