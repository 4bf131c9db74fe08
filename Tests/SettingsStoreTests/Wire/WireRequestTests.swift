import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Wire requests", .timeLimit(.minutes(2)))
struct WireRequestTests {
    static let requests: [WireRequest] = [
        .hello(WireRequest.Hello(name: "tests")),
        .hello(
            WireRequest.Hello(
                replica: ReplicaID.random(), sequence: 42, clockMilliseconds: 7,
                lineage: Lineage(startingAt: 3))), .get(key: "a"),
        .getMany(keys: ["a", "b"]),
        .set(key: "a", value: ["x": [1, 2.5]]),
        .setMany(changes: [.init(key: "a", value: 1), .init(key: "b", value: nil)]), .delete(key: "a"),
        .list(prefix: "ui.", includeValues: true), .watch(filter: .all), .watch(filter: .keys(["a"])),
        .watch(filter: .prefixes(["ui."])), .watch(filter: .keysOrPrefixes(keys: ["a"], prefixes: ["b."])),
        .unwatch(watch: 3), .status, .export,
        .import(document: ExportDocument(values: ["a": true]), replace: true),
        .import(document: ExportDocument(values: ["a": true]), replace: true, replacingUnder: ["a.", "/a/"]),
        .reset(keyOrPrefix: "ui."), .reset(keyOrPrefix: ""),
        .getStored(key: "a"), .getVersioned(key: "a"), .watch(filter: .prefixes(["ui."]), since: 0),
        .watch(filter: .all, since: 123_456),
        .set(key: "a", value: 1, precondition: .absent),
        .set(key: "a", value: 1, precondition: .version(version)),
        .setText(key: "a", text: "['us', 'de']"), .setText(key: "a", text: "7", precondition: .absent),
        .delete(key: "a", precondition: .version(version)), .delete(key: "a", precondition: .absent),
        .setMany(changes: [
            .init(key: "a", value: 1, if: .version(version)), .init(key: "b", value: nil, if: .absent),
            .init(key: "c", value: 2),
        ]),
    ]

    static let version = SettingVersion(
        timestamp: .init(rawValue: 1_764_420_000_000 << 16 | 3), replica: .random())

    @Test("a write's precondition is a version or absent, never both nor a malformed version")
    func preconditionsAreChecked() throws {
        for frame in [
            #"{"id": 1, "op": "set", "key": "a", "value": 1, "ifVersion": "12.0@x"}"#,
            #"{"id": 1, "op": "set", "key": "a", "value": 1, "ifVersion": "\#(Self.version)", "ifAbsent": true}"#,
            #"{"id": 1, "op": "set", "key": "a", "value": 1, "text": "1"}"#,
            #"{"id": 1, "op": "delete", "key": "a", "ifVersion": 7}"#,
            #"{"id": 1, "op": "watch", "since": -1}"#,
            #"{"id": 1, "op": "watch", "since": "1"}"#,
        ] {
            let decoded = WireRequest.decode(try JSONValue.parse(frame))
            #expect(throws: SettingsError.self, "\(frame)") { try decoded.request.get() }
        }
    }

    @Test("reset of everything is asked for by name: an empty key is refused")
    func resetEverythingByName() throws {
        let empty = WireRequest.decode(try JSONValue.parse(#"{"id": 1, "op": "reset", "key": ""}"#))
        #expect(throws: SettingsError.self) { try empty.request.get() }
        let all = WireRequest.decode(try JSONValue.parse(#"{"id": 1, "op": "reset", "all": true}"#))
        #expect(try all.request.get() == .reset(keyOrPrefix: ""))
    }

    @Test("every request survives encoding and decoding", arguments: requests)
    func roundTrip(request: WireRequest) throws {
        let text = request.json(id: 42).serialized()
        let decoded = WireRequest.decode(try JSONValue.parse(text))
        #expect(decoded.id == 42)
        #expect(try decoded.request.get() == request)
    }

    @Test(
        "bad requests are answered with a precise error, keeping the id when there is one",
        arguments: [
            (#"{"id": 1}"#, SettingsError.Code.protocolError), (#"{"id": 2, "op": "get"}"#, .protocolError),
            (#"{"id": 3, "op": "get", "key": 5}"#, .protocolError),
            (#"{"id": 4, "op": "fly"}"#, .unknownOperation),
            (#"{"id": 5, "op": "set", "key": "a", "value": null}"#, .protocolError),
            (#"{"id": 6, "op": "import", "document": {"format": "x"}}"#, .protocolError),
            (#"{"id": 7, "op": "list", "values": "yes"}"#, .protocolError),
            (#"[1, 2]"#, .protocolError),
        ])
    func badRequests(text: String, code: SettingsError.Code) throws {
        let decoded = WireRequest.decode(try JSONValue.parse(text))
        guard case .failure(let error) = decoded.request else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.code == code)
        if text.hasPrefix("{") { #expect(decoded.id != nil) }
    }

    @Test("huge key lists are refused")
    func hugeLists() throws {
        let keys = (0...WireRequest.maximumItems).map { JSONValue.string("k\($0)") }
        let decoded = WireRequest.decode(
            .object(["id": .integer(1), "op": .string("getMany"), "keys": .array(keys)]))
        guard case .failure(let error) = decoded.request else {
            Issue.record("accepted \(keys.count) keys")
            return
        }
        #expect(error.code == .tooManyItems)
    }

    @Test("events and errors decode on the client side")
    func incoming() throws {
        let change = SettingsChange(
            reason: .local, origin: .random(),
            changes: [
                .init(
                    key: "a", value: 1,
                    version: SettingVersion(timestamp: .init(rawValue: 99 << 16 | 3), replica: .random())),
                .init(
                    key: "b", value: nil,
                    version: SettingVersion(timestamp: .init(rawValue: 5), replica: .random())),
            ], sequence: 12)
        guard case .event(7, let decoded) = try WireMessage.decode(WireMessage.event(watch: 7, change)) else {
            Issue.record("not an event")
            return
        }
        #expect(decoded == change)
        let failure = WireMessage.failure(id: 3, SettingsError(.limitExceeded, "too big"))
        guard case .response(3, .failure(let error)) = try WireMessage.decode(failure) else {
            Issue.record("not a failure")
            return
        }
        #expect(error.code == .limitExceeded)
        #expect(error.message == "too big")
    }
}
