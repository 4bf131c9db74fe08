import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// The text of replication frames is written and read without a `JSONValue` tree for the
/// entries (`ReplicationMessage+Frame.swift`): these pin both directions to the tree's.
@Suite("Replication frames: the quick text of batches is the JSON tree's, both ways")
struct ReplicationFrameTests {
    static let keys = [
        "a", "ui.theme", "héllo.👋", "quote\"d", "back\\slash", "tab\tnew\nline", "\u{7F}del", "",
    ]

    static func entries(_ count: Int, using generator: inout SeededGenerator) -> [SettingEntry] {
        let replicas = (0..<3).map { _ in ReplicaID.random() }
        return (0..<count).map { index in
            let key = keys[index % keys.count] + ".\(index)"
            let value: SettingValue? =
                Int.random(in: 0..<5, using: &generator) == 0
                ? nil : SettingValueBinaryTests.samples.randomElement(using: &generator)
            let timestamp = HybridTimestamp(
                milliseconds: UInt64.random(in: 0..<(1 << 44), using: &generator),
                counter: UInt16.random(in: 0..<4, using: &generator))
            return SettingEntry(
                key: key, value: value,
                version: SettingVersion(timestamp: timestamp, replica: replicas[index % replicas.count]),
                sequence: Int64.random(in: 0...(1 << 62), using: &generator))
        }
    }

    static func messages(using generator: inout SeededGenerator) -> [ReplicationMessage] {
        [
            .replicate(entries: [], through: 0, sequence: 0),
            .replicate(entries: entries(1, using: &generator), through: 7, sequence: 9),
            .replicate(entries: entries(40, using: &generator), through: 1 << 62, sequence: 12),
            .repair(buckets: [], entries: [], final: true, applied: 0),
            .repair(
                buckets: [0, 17, 4095], entries: entries(25, using: &generator), final: false, applied: 3),
            .acknowledge(through: 5, settled: 2), .start(cursor: 0), .busy, .agreed(settled: 1),
            .check(digest: 0xDEAD_BEEF, settled: 4), .neighbours([ReplicaID.random()]),
            .forked(reason: "restored"),
        ]
    }

    /// What reading `text` gives: the message, or the error's code and message.
    static func outcome(_ read: () throws(SettingsError) -> ReplicationMessage) -> String {
        do throws(SettingsError) {
            return "\(try read())"
        } catch {
            return "error \(error.code): \(error.message)"
        }
    }

    @Test("every message's text is the bytes its JSON tree serializes to, and reads back as itself")
    func writtenAsTheTree() throws {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        for message in Self.messages(using: &generator) {
            var bytes: [UInt8] = []
            message.write(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == message.json.serialized())
            #expect(try ReplicationMessage(frame: bytes[...]) == message)
        }
    }

    @Test(
        "any frame, whole, cut short or damaged, reads as the JSON tree reads it: same message or same error")
    func readAsTheTree() throws {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        var texts: [String] = []
        for message in Self.messages(using: &generator) {
            var bytes: [UInt8] = []
            message.write(to: &bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            texts.append(text)
            // Cut short anywhere, and damaged at random places.
            for end in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300)) {
                texts.append(String(decoding: bytes[..<end], as: UTF8.self))
            }
            for _ in 0..<40 where !bytes.isEmpty {
                var damaged = bytes
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
                texts.append(String(decoding: damaged, as: UTF8.self))
            }
        }
        let entry = #"{"key":"k","seq":3,"value":1,"version":"1.0@00000000-0000-0000-0000-000000000001"}"#
        texts += [
            // Entries twice, not an array, not objects, or where no batch reads them.
            #"{"entries":[],"entries":[],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":{},"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[1],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[\#(entry)],"op":"ack","settled":0,"through":1}"#,
            #"{"entries":[{"bad":true}],"op":"ack","settled":0,"through":1}"#,
            #"{"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[\#(entry)],"op":"nope"}"#,
            #"{"entries":[\#(entry)],"sequence":1,"through":1}"#,
            // Entries with a repeated member, a refusal, no version, a bad one, extra members.
            #"{"entries":[{"key":"k","key":"j","version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"key":"k","refused":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"repair","buckets":[],"final":true,"applied":0}"#,
            #"{"entries":[{"key":"k","value":1}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"key":"k","value":1,"version":"soon"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"deleted":true,"extra":[1,{"x":null}],"key":"k","version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[],"op":"replicate","sequence":1,"through":9223372036854775807}"#,
            #" { "entries" : [ \#(entry) , \#(entry) ] , "op" : "replicate" , "sequence" : 1 , "through" : 1 } "#,
            #"{"entries":[\#(entry)],"op":"replicate","sequence":1,"through":1} x"#,
            // Nested to the limit and past it, inside an entry's value and a member no one reads.
            #"{"entries":[{"deleted":true,"extra":\#(String(repeating: "[", count: 61))\#(String(repeating: "]", count: 61)),"key":"k","version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"deleted":true,"extra":\#(String(repeating: "[", count: 62))\#(String(repeating: "]", count: 62)),"key":"k","version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"key":"k","value":\#(String(repeating: "[", count: 61))\#(String(repeating: "]", count: 61)),"version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
            #"{"entries":[{"key":"k","value":\#(String(repeating: "[", count: 62))\#(String(repeating: "]", count: 62)),"version":"1.0@00000000-0000-0000-0000-000000000001"}],"op":"replicate","sequence":1,"through":1}"#,
        ]
        // The quick reading falls back on the tree's for any error, so it could only differ by
        // taking what the tree refuses: each case above is a valid frame but for its one fault.
        for text in texts {
            let bytes = Array(text.utf8)
            let quick = Self.outcome { () throws(SettingsError) in try ReplicationMessage(frame: bytes[...]) }
            let tree = Self.outcome { () throws(SettingsError) in
                try ReplicationMessage(json: JSONValue.parse(bytes[...]))
            }
            #expect(quick == tree, "\(text)")
        }
    }
}
