import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Wire contract: request shape, hello, reasons, dates")
struct WireContractTests {
    let directory = TemporaryDirectory()

    /// Sends `text` as one frame and returns the next frame that is not an event.
    func answer(_ client: BlockingClient, _ text: String) throws -> WireMessage.Incoming {
        try client.write(Array((text + "\n").utf8))
        while true {
            let frame = try client.receive()
            if case .event = frame { continue }
            return frame
        }
    }

    func errorCode(_ frame: WireMessage.Incoming) -> (id: Int64?, code: SettingsError.Code?) {
        guard case .response(let id, .failure(let error)) = frame else { return (nil, nil) }
        return (id, error.code)
    }

    @Test("a request without an id is refused and does not run")
    func requestWithoutID() throws {
        let daemon = try DaemonProcess(directory)
        let client = try daemon.client()
        let refused = errorCode(try answer(client, #"{"op": "set", "key": "ghost", "value": 1}"#))
        #expect(refused.id == nil && refused.code == .protocolError)
        let null = errorCode(try answer(client, #"{"id": null, "op": "set", "key": "ghost", "value": 1}"#))
        #expect(null.id == nil && null.code == .protocolError)
        #expect(try client.request(.get(key: "ghost"))["found"] == .bool(false))
    }

    @Test("a watch that selects nothing is refused; empty keys beside prefixes are fine")
    func emptyWatch() throws {
        let daemon = try DaemonProcess(directory)
        let client = try daemon.client()
        for text in [
            #"{"id": 1, "op": "watch", "keys": []}"#, #"{"id": 2, "op": "watch", "prefixes": []}"#,
            #"{"id": 3, "op": "watch", "keys": [], "prefixes": []}"#,
        ] {
            #expect(errorCode(try answer(client, text)).code == .protocolError, "\(text)")
        }
        guard
            case .response(4, .success) = try answer(
                client, #"{"id": 4, "op": "watch", "keys": [], "prefixes": ["a."]}"#)
        else {
            Issue.record("a watch of a prefix beside no keys was refused")
            return
        }
    }

    @Test("hello is only a first frame, and only in this build's version")
    func helloRules() throws {
        let daemon = try DaemonProcess(directory)
        let first = try daemon.client()
        guard
            case .response(1, .success(let welcome)) = try answer(
                first, #"{"id": 1, "op": "hello", "version": 2}"#)
        else {
            Issue.record("hello 2 was refused")
            return
        }
        #expect(welcome["version"] == .integer(SettingsdVersion.protocolVersion))
        #expect(
            errorCode(try answer(first, #"{"id": 2, "op": "hello", "version": 2}"#)).code == .protocolError)
        let replicaLate = try daemon.client()
        _ = try replicaLate.request(.status)
        let late = try answer(
            replicaLate,
            #"{"id": 3, "op": "hello", "version": 3, "role": "replica", "replica": "\#(UUID())", "sequence": 0}"#
        )
        #expect(errorCode(late).code == .protocolError)
        let old = try daemon.client()
        #expect(
            errorCode(try answer(old, #"{"id": 4, "op": "hello", "version": 1}"#)).code == .unsupportedVersion
        )
    }

    @Test("each kind of write is announced with its own reason, as the history records it")
    func reasonsOnTheWire() throws {
        let daemon = try DaemonProcess(directory)
        let watcher = try daemon.client()
        _ = try watcher.request(.watch(filter: .all))
        let writer = try daemon.client()
        try writer.request(.set(key: "r.a", value: 1))
        try writer.request(.delete(key: "r.a"))
        try writer.request(.set(key: "r.b", value: 2))
        try writer.request(.setMany(changes: [.init(key: "r.b", value: nil)]))
        let history = try writer.request(.history(HistoryQuery(keyOrPrefix: "r.a")))
        guard case .array(let records)? = history["records"], case .object(let oldest)? = records.last,
            case .string(let version)? = oldest["version"], let parsed = SettingVersion(version)
        else {
            Issue.record("no history: \(history)")
            return
        }
        try writer.request(.revert(key: "r.a", version: parsed))
        try writer.request(.reset(keyOrPrefix: "r."))
        var reasons: [ChangeReason] = []
        while reasons.count < 6 {
            if case .event(_, let change) = try watcher.receive() { reasons.append(change.reason) }
        }
        #expect(reasons == [.local, .local, .local, .local, .revert, .reset])
        let recorded = try writer.request(.history(HistoryQuery(keyOrPrefix: "r.")))
        guard case .array(let all)? = recorded["records"] else { return }
        let names = all.compactMap { record -> String? in
            guard case .object(let members) = record, case .string(let reason)? = members["reason"] else {
                return nil
            }
            return reason
        }
        #expect(names == ["reset", "revert", "local", "local", "local", "local"])
    }

    @Test(
        "a date is carried as seconds since 2001 bit for bit; ISO 8601 strings and version 1 documents are read"
    )
    func dates() throws {
        let negativeZero = SettingValue.date(Date(timeIntervalSinceReferenceDate: -0.0))
        #expect(negativeZero.json.serialized() == #"{"$date":-0.0}"#)
        let tiny = SettingValue.date(Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude))
        #expect(try SettingValue(json: JSONValue.parse(tiny.json.serialized())).isIdentical(to: tiny))
        #expect(
            try SettingValue(jsonText: #"{"$date": 0}"#) == .date(Date(timeIntervalSince1970: 978_307_200)))
        #expect(
            try SettingValue(jsonText: #"{"$date": "2001-01-01T00:00:01.5Z"}"#)
                == .date(Date(timeIntervalSinceReferenceDate: 1.5)))
        #expect(throws: SettingsError.self) { try SettingValue(jsonText: #"{"$date": "yesterday"}"#) }
        let legacy = try ExportDocument(
            jsonText: Array(
                #"{"format": "settingsd-export", "version": 1, "values": {"d": {"$date": 978307201}}}"#.utf8))
        #expect(legacy.values["d"] == .date(Date(timeIntervalSinceReferenceDate: 1)))
        #expect(ExportDocument(values: [:]).json.serialized().contains(#""version":2"#))
    }
}
