import Foundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// Random GVariant values of random types, for the codec's property tests.
struct GVariantGenerator {
    var random: SeededGenerator

    mutating func int<T: FixedWidthInteger>(_: T.Type) -> T {
        // Mostly the edges, where widths and signs go wrong.
        switch Int.random(in: 0..<4, using: &random) {
        case 0: T.min
        case 1: T.max
        case 2: T(truncatingIfNeeded: Int.random(in: -3...3, using: &random))
        default: T(truncatingIfNeeded: random.next())
        }
    }

    mutating func type(depth: Int = 0) -> GVariantType {
        let basics: [GVariantType] = [
            .boolean, .byte, .int16, .uint16, .int32, .uint32, .int64, .uint64, .handle, .double, .string,
            .objectPath, .signature,
        ]
        guard depth < 3, Int.random(in: 0..<3, using: &random) == 0 else {
            return Int.random(in: 0..<8, using: &random) == 0
                ? .variant : basics.randomElement(using: &random)!
        }
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .maybe(type(depth: depth + 1))
        case 1: return .tuple((0..<Int.random(in: 0...3, using: &random)).map { _ in type(depth: depth + 1) })
        case 2:
            return .array(
                .dictEntry(key: basics.randomElement(using: &random)!, value: type(depth: depth + 1)))
        default: return .array(type(depth: depth + 1))
        }
    }

    mutating func string() -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\u{07}", "\u{1B}", "\u{7F}", "é", "😀", "\u{2028}",
            "\u{200B}", "\u{E000}", "\u{FEFF}", "/", ":", "%", "@", "{", "<",
        ]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            text.append(pool.randomElement(using: &random)!)
        }
        return String(text)
    }

    mutating func value(of type: GVariantType, depth: Int = 0) -> GVariant {
        switch type {
        case .boolean: return .boolean(Bool.random(using: &random))
        case .byte: return .byte(int(UInt8.self))
        case .int16: return .int16(int(Int16.self))
        case .uint16: return .uint16(int(UInt16.self))
        case .int32: return .int32(int(Int32.self))
        case .uint32: return .uint32(int(UInt32.self))
        case .int64: return .int64(int(Int64.self))
        case .uint64: return .uint64(int(UInt64.self))
        case .handle: return .handle(int(Int32.self))
        case .double:
            // No subnormals: GLib prints them but cannot read them back ("number too big").
            let specials: [Double] = [
                0, -0.0, 0.1, 1, -1.5, 1e100, .leastNormalMagnitude, .infinity, -.infinity, .nan, 1e16,
                123_456_789,
            ]
            let bits = Double(bitPattern: random.next())
            return .double(
                Bool.random(using: &random) || bits.isSubnormal
                    ? specials.randomElement(using: &random)! : bits)
        case .string: return .string(string())
        case .objectPath:
            return .objectPath(["/", "/org", "/org/gnome/Foo_1", "/a/b/c"].randomElement(using: &random)!)
        case .signature: return .signature(["", "s", "a{sv}", "(ii)as", "v"].randomElement(using: &random)!)
        case .variant:
            let inner = depth < 3 ? self.type(depth: depth + 1) : .int32
            return .variant(value(of: inner, depth: depth + 1))
        case .maybe(let element):
            return .maybe(
                element: element, Bool.random(using: &random) ? value(of: element, depth: depth + 1) : nil)
        case .array(.byte) where Bool.random(using: &random):
            // A byte string, printed as b'…'.
            return .array(element: .byte, Array(string().utf8).map(GVariant.byte) + [.byte(0)])
        case .array(let element):
            let count = Int.random(in: 0...3, using: &random)
            var children = (0..<count).map { _ in value(of: element, depth: depth + 1) }
            if case .dictEntry(let key, _) = element, [.string, .objectPath, .signature].contains(key) {
                // String-keyed dictionaries are kept as setting dictionaries: sorted, unique keys.
                func name(_ entry: GVariant) -> String {
                    switch entry {
                    case .dictEntry(.string(let text), _), .dictEntry(.objectPath(let text), _),
                        .dictEntry(.signature(let text), _):
                        text
                    default: ""
                    }
                }
                var seen = Set<String>()
                children = children.filter { seen.insert(name($0)).inserted }
                children.sort { name($0).utf8.lexicographicallyPrecedes(name($1).utf8) }
            }
            return .array(element: element, children)
        case .tuple(let members): return .tuple(members.map { value(of: $0, depth: depth + 1) })
        case .dictEntry(let key, let valueType):
            return .dictEntry(
                key: value(of: key, depth: depth + 1), value: value(of: valueType, depth: depth + 1))
        }
    }
}

@Suite("GVariant text")
struct GVariantCodecTests {
    /// dconf dump lines of odd cases, and what GLib reads them as (checked by the oracle test).
    static let fixtures: [(text: String, type: String?)] = [
        ("'it''s'", nil), ("\"it's\"", nil), ("'say \"hi\"'", nil), ("'tab\\there\\u00e9\\U0001F600'", nil),
        ("'😀 emoji'", nil), ("-5", nil), ("-2147483648", nil), ("int64 -9223372036854775808", nil),
        ("uint64 18446744073709551615", nil), ("0x1F", nil), ("017", nil), ("-0.0", nil), ("1e300", nil),
        ("inf", nil), ("-inf", nil), ("nan", nil), ("<<7>>", nil), ("<(uint32 2, 'ABC')>", nil),
        ("@as []", nil), ("@ms nothing", nil), ("just nothing", "mmi"), ("@mmi just nothing", nil),
        ("b'abc'", nil), ("b\"it's\"", nil), ("b'\\001\\377'", nil), ("[byte 0x01, 0x02]", nil),
        ("{'a': <1>, 'b': <'x'>}", nil), ("{1: 'one'}", nil), ("{'k', 5}", nil), ("@a{sv} {}", nil),
        ("[(1, 'a'), (2, 'b')]", nil), ("(1,)", nil), ("()", nil), ("[1, 2.5]", nil), ("[@u 1, 2]", nil),
        ("[[], [1]]", nil), ("[nothing, just 5]", nil), ("objectpath '/org/gnome'", nil),
        ("signature 'a{sv}'", nil), ("5", "mi"), ("'x'", "ms"), ("7", "u"), ("7", "d"), ("[]", "as"),
        ("  true  ", nil), ("[<1>, <'a'>]", nil), ("@aa{sv} [{'position': <0>}]", nil),
        // Refused, by GLib and by us.
        ("[]", nil), ("nothing", nil), ("'open", nil), ("[1, 'a']", nil), ("300", "y"), ("-1", "u"),
        ("1.5", "i"), ("(1, 2)", "(i)"), ("{[1]: 2}", nil), ("@q 5 6", nil), ("'\\u0000'", nil),
        ("objectpath 'x'", nil), ("unknownword", nil), ("[1,", nil), ("<1", nil),
        ("99999999999999999999", nil),
        ("1e999", nil), ("@z 1", nil), ("", nil),
    ]

    @Test("Odd dconf values parse and print exactly as GLib does, and GLib's refusals are refused")
    func fixturesMatchGLib() throws {
        try #require(GLibOracle.isAvailable, "python3-gi is not installed")
        let answers = try GLibOracle.ask(Self.fixtures.map { .init(text: $0.text, type: $0.type) })
        for (fixture, answer) in zip(Self.fixtures, answers) {
            let type = try fixture.type.map { try GVariantType($0) }
            let ours = Result { try GVariant(parsing: fixture.text, type: type) }
            switch ours {
            case .success(let value):
                #expect(answer.ok, "we accept \(fixture.text) but GLib says \(answer.error ?? "")")
                #expect(value.text == answer.printed, "\(fixture.text)")
                #expect(value.type.description == answer.type, "\(fixture.text)")
                // What we print, we read back as the same value.
                #expect(try GVariant(parsing: value.text).text == value.text)
            case .failure(let error):
                #expect(
                    !answer.ok, "we refuse \(fixture.text) (\(error)) but GLib reads \(answer.printed ?? "")")
            }
        }
    }

    @Test("Random values of random types print as GLib prints them, and read back equal")
    func randomValuesAgainstGLib() throws {
        try #require(GLibOracle.isAvailable, "python3-gi is not installed")
        let seed = SeededGenerator.seed
        var generator = GVariantGenerator(random: SeededGenerator(seed: seed))
        let values = (0..<SuiteScale.pick(ci: 1500, full: 20_000)).map { _ in
            let type = generator.type()
            return generator.value(of: type)
        }
        // Typed: GLib reads our text as the same type and prints it back identically.
        let typed = try GLibOracle.ask(values.map { .init(text: $0.text, type: $0.type.description) })
        // Untyped: the annotations we print are enough for GLib to infer the same type.
        let untyped = try GLibOracle.ask(values.map { .init(text: $0.text) })
        for (index, value) in values.enumerated() {
            let text = value.text
            #expect(typed[index].printed == text, "seed \(seed): \(value.type) \(text) → \(typed[index])")
            #expect(
                untyped[index].type == value.type.description, "seed \(seed): \(text) → \(untyped[index])")
            let reparsed = try GVariant(parsing: text, type: value.type)
            #expect(reparsed.text == text, "seed \(seed): \(text)")
            #expect(try GVariant(parsing: text).type == value.type, "seed \(seed): \(text)")
        }
    }

    @Test("Every value maps to a setting value and back to itself, typed and untyped")
    func settingValueRoundTrip() throws {
        let seed = SeededGenerator.seed
        var generator = GVariantGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<2000 {
            let type = generator.type()
            let value = generator.value(of: type)
            if case .uint64(let big) = value, big > UInt64(Int64.max) {
                #expect(throws: SettingsError.self) { try value.settingValue() }
                continue
            }
            guard let natural = try? value.settingValue() else { continue }  // a nested uint64 over Int64.max
            let typed = try GVariant(natural, type: type)
            #expect(typed.text == value.text, "seed \(seed): \(type) \(value.text) → \(natural)")
            let carried = try value.untypedSettingValue()
            let untyped = try GVariant(untyped: carried)
            #expect(untyped.text == value.text, "seed \(seed): \(value.text) → \(carried)")
        }
    }

    @Test("Values carry their type only when the setting value does not imply it")
    func untypedValuesAreNaturalWherePossible() throws {
        #expect(try GVariant(parsing: "['a', 'b']").untypedSettingValue() == ["a", "b"])
        #expect(try GVariant(parsing: "{'position': <0>}").untypedSettingValue() == ["position": 0])
        #expect(try GVariant(parsing: "int64 3000000000").untypedSettingValue() == 3_000_000_000)
        #expect(try GVariant(parsing: "uint32 7").untypedSettingValue() == ["$gvariant": "u", "$value": 7])
        #expect(try GVariant(parsing: "@as []").untypedSettingValue() == ["$gvariant": "as", "$value": []])
        #expect(
            try GVariant(untyped: ["$gvariant": "(us)", "$value": [2, "ABC"]]).text == "(uint32 2, 'ABC')")
        #expect(throws: SettingsError.self) { try GVariant(untyped: .date(Date(timeIntervalSince1970: 0))) }
        #expect(throws: SettingsError.self) { try GVariant(.integer(1 << 40), type: .int32) }
        #expect(throws: SettingsError.self) { try GVariant(.string("a\u{0}b"), type: .string) }
    }
}
