import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// The wire's fast paths (requests read straight from bytes, frames written in place) against
/// the reference path through `JSONValue`: the same answers for every frame, the same bytes for
/// every message.
@Suite("Wire fast paths agree with the JSONValue path", .timeLimit(.minutes(2)))
struct WireFastPathTests {
    /// The reference: parse into a `JSONValue`, then decode; a malformed frame has no id.
    static func referenceDecode(_ frame: [UInt8]) -> (id: Int64?, request: Result<WireRequest, SettingsError>)
    {
        do throws(SettingsError) {
            return WireRequest.decode(try JSONValue.parse(frame))
        } catch {
            return (nil, .failure(error))
        }
    }

    static func expectSameDecoding(_ frame: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = WireRequest.decode(frame: frame[...])
        let reference = referenceDecode(frame)
        let text = String(decoding: frame.prefix(200), as: UTF8.self)
        #expect(fast.id == reference.id, "id of \(text)", sourceLocation: sourceLocation)
        switch (fast.request, reference.request) {
        case (.success(let fast), .success(let reference)):
            #expect(fast == reference, "request of \(text)", sourceLocation: sourceLocation)
        case (.failure(let fast), .failure(let reference)):
            #expect(fast.code == reference.code, "code for \(text)", sourceLocation: sourceLocation)
            #expect(fast.message == reference.message, "message for \(text)", sourceLocation: sourceLocation)
        default:
            Issue.record("one path accepted what the other refused: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("hostile frames decode to the same request or the same error on both paths")
    func fuzzedFrames() {
        var fuzzer = FrameFuzzer(generator: SeededGenerator(seed: SeededGenerator.seed))
        for _ in 0..<20_000 {
            var frame = fuzzer.frame()
            if frame.last == 0x0A { frame.removeLast() }
            guard frame.count < 1 << 20 else { continue }
            Self.expectSameDecoding(frame)
        }
    }

    @Test(
        "objects with many members, repeated names and odd shapes decode alike",
        arguments: [
            #"{"id":1,"op":"get","key":"a","id":2}"#, #"{"op":"get","key":"a"} "#, #" [1,2] "#, #""text""#,
            #"{"id":"1","op":"get","key":"a"}"#, #"{"id":1.5,"op":"get","key":"a"}"#, #"{}"#, #"{"#,
            #"{"id":3,"op":"get","key":"a"} x"#, #"{"id":4,"op":"get","key":"a\u00e9\ud83d\ude00"}"#,
            #"{"id":5,"op":"set","key":"a","value":{"$data":"AAE="},"extra":[{"deep":true}]}"#,
            #"{"id":null,"op":"status"}"#,
        ])
    func oddShapes(text: String) {
        Self.expectSameDecoding(Array(text.utf8))
    }

    @Test("a repeated name is found past the linear scan, at any position")
    func repeatedNameAmongMany() {
        for count in [15, 16, 17, 40] {
            for repeated in [0, count / 2, count - 1] {
                let members = (0..<count).map { #""m\#($0)":\#($0)"# } + [#""m\#(repeated)":0"#]
                let text = #"{"id":1,"op":"status","# + members.joined(separator: ",") + "}"
                Self.expectSameDecoding(Array(text.utf8))
                guard case .failure(let error) = WireRequest.decode(frame: Array(text.utf8)[...]).request
                else {
                    Issue.record("accepted a repeated member among \(count)")
                    continue
                }
                #expect(error.message.contains("duplicate key 'm\(repeated)'"))
            }
        }
    }

    @Test("requests written in place are the bytes of their JSON form, for every key and value")
    func requestsWrittenInPlace() {
        var requests = WireRequestTests.requests
        for key in SettingsCorpus.keys {
            requests += [.get(key: key), .delete(key: key)]
            requests += SettingsCorpus.values.map { .set(key: key, value: $0) }
        }
        for (index, request) in requests.enumerated() {
            let id = Int64(index) - 3
            var bytes: [UInt8] = []
            request.write(id: id, to: &bytes)
            #expect(bytes == Array(request.json(id: id).serialized().utf8), "\(request.operation) \(index)")
            // Compared by their bytes again: NaN is not equal to itself.
            var again: [UInt8] = []
            (try? WireRequest.decode(frame: bytes[...]).request.get())?.write(id: id, to: &again)
            #expect(again == bytes, "\(String(describing: request).prefix(120))")
        }
    }

    @Test("answers written in place are the bytes of the messages they stand for")
    func answersWrittenInPlace() {
        let ids: [Int64?] = [nil, 0, -1, .max, .min, 42]
        for id in ids {
            let version = SettingVersion(timestamp: .init(rawValue: 77 << 16 | 2), replica: .random())
            for value in SettingsCorpus.values.map(Optional.some) + [nil] {
                // A default has no version; a stored value has; a lock can hide a stored one.
                for version in [nil, version] {
                    var bytes: [UInt8] = []
                    WireMessage.writeValue(id: id, value, version: version, to: &bytes)
                    let reference = WireMessage.success(
                        id: id, WireMessage.valueFields(value, version: version)
                    )
                    .serialized()
                    #expect(bytes == Array(reference.utf8))
                }
            }
            let results: [[String: JSONValue]] = [
                [:], ["sequence": .integer(7)],
                [
                    "zeta": "z", "alpha": .array([.integer(1), .integer(2)]), "ok": .bool(false), "id": "x",
                    "i": .null,
                ],
                ["caf\u{E9}": .integer(1), "cafe\u{301}.x": .integer(2), "\u{1}": "\""],
            ]
            for result in results {
                var bytes: [UInt8] = []
                WireMessage.writeSuccess(id: id, result, to: &bytes)
                #expect(bytes == Array(WireMessage.success(id: id, result).serialized().utf8))
            }
        }
    }

    @Test("a daemon's frames decode to their fields without the envelope, on both paths")
    func responsesWithoutEnvelope() throws {
        let frame = WireMessage.success(id: 9, ["found": .bool(true), "value": .integer(3)]).serialized()
        for incoming in [
            try WireMessage.decode(frame: Array(frame.utf8)[...]),
            try WireMessage.decode(JSONValue.parse(frame)),
        ] {
            guard case .response(let id, .success(let fields)) = incoming else {
                Issue.record("not a successful response: \(incoming)")
                continue
            }
            #expect(id == 9)
            #expect(fields == ["found": .bool(true), "value": .integer(3)])
        }
    }
}

@Suite("A pipeline's answers keep their fields as read")
struct WireAnswerTests {
    /// Answers of every size around the list's linear scan, with every kind of value.
    static let answers: [[String: JSONValue]] = (0..<40).map { count in
        var fields: [String: JSONValue] = [:]
        for index in 0..<count {
            let values: [JSONValue] = [
                .bool(index % 2 == 0), .integer(Int64(index)), .string("v\(index)"), .null,
                .array([.integer(1)]), .object(["nested": .string("x")]),
            ]
            fields["field\(index)"] = values[index % values.count]
        }
        if count % 3 == 0 { fields["key"] = .string("a.b") }
        if count % 4 == 0 { fields["op"] = .string("get") }
        return fields
    }

    @Test("an answer read from a frame has the fields of the same answer parsed into a JSONValue")
    func bothPathsAgree() throws {
        for fields in Self.answers {
            let frame = WireMessage.success(id: 7, fields).serialized()
            guard
                case .response(7, .success(let read)) = try WireMessage.decode(frame: Array(frame.utf8)[...]),
                case .response(7, .success(let parsed)) = try WireMessage.decode(JSONValue.parse(frame))
            else {
                Issue.record("not a successful answer to 7: \(frame)")
                continue
            }
            #expect(read == parsed)
            #expect(read.fields == fields)
            #expect(read == WireAnswer(fields))
            for (name, value) in fields { #expect(read[name] == value) }
            #expect(read["absent"] == nil)
            #expect(read["id"] == nil && read["ok"] == nil)
        }
    }

    @Test("a field repeated in an answer is refused, past the linear scan too")
    func repeatedFieldRefused() {
        for count in [1, 15, 16, 17, 40] {
            let members = (0..<count).map { #""f\#($0)":\#($0)"# } + [#""f0":"again""#]
            let frame = "{\"id\":1,\"ok\":true," + members.joined(separator: ",") + "}"
            #expect(throws: SettingsError.self) { try WireMessage.decode(frame: Array(frame.utf8)[...]) }
        }
    }
}
