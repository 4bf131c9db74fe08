import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

@Suite("Synced folder files: names, batches and snapshots, state files")
struct FolderFormatTests {
    let replica = ReplicaID.random()
    let incarnation = UUID()

    func entries(_ count: Int, from first: Int64 = 1) -> [SettingEntry] {
        (0..<count).map { index in
            SettingEntry(
                key: "k.\(index)", value: index % 5 == 4 ? nil : .string("v\(index) \"quoted\"\n"),
                version: SettingVersion(
                    timestamp: HybridTimestamp(milliseconds: 1_700_000_000_000 + UInt64(index), counter: 0),
                    replica: replica),
                sequence: first + Int64(index))
        }
    }

    func batch(_ count: Int = 20) -> (FolderFile, FolderFileName) {
        let file = FolderFile(
            kind: .batch, replica: replica, incarnation: incarnation, first: 1, last: Int64(count),
            entries: entries(count))
        let name = FolderFileName.batchName(
            first: 1, last: Int64(count), tag: FolderFileName.tag(of: incarnation))
        return (file, FolderFileName(name))
    }

    @Test("settingsd's names parse; a syncer's copies, temporaries and other files are told apart")
    func names() {
        #expect(FolderFileName("b-1-40-0a1b2c3d.jsonl") == .batch(first: 1, last: 40, tag: "0a1b2c3d"))
        #expect(FolderFileName("s-900-0a1b2c3d.jsonl") == .snapshot(through: 900, tag: "0a1b2c3d"))
        #expect(FolderFileName("state.json") == .state)
        #expect(FolderFileName(".syncthing.b-1-40-0a1b2c3d.jsonl.tmp") == .temporary)
        #expect(FolderFileName(".tmp-1234abcd-b-1-40-0a1b2c3d.jsonl") == .temporary)
        #expect(FolderFileName("b-1-40-0a1b2c3d.sync-conflict-20261207-101010-ABCDEFG.jsonl") == .syncerCopy)
        #expect(FolderFileName("state (conflicted copy 2026-12-07).json") == .syncerCopy)
        #expect(FolderFileName("b-1-40-0a1b2c3d.jsonl.part") == .syncerCopy)
        for foreign in [
            "b-40-1-0a1b2c3d.jsonl", "b-0-1-0a1b2c3d.jsonl", "b-01-2-0a1b2c3d.jsonl", "b-1-2-0A1B2C3D.jsonl",
            "b-1-99999999999999999999-0a1b2c3d.jsonl", "b-1-2-0a1b2c3.jsonl", "notes.txt",
            "s-0-0a1b2c3d.jsonl",
        ] {
            #expect(FolderFileName(foreign) == .foreign, "\(foreign)")
        }
    }

    @Test("a batch and a snapshot read back as written, entries, tombstones and escapes included")
    func roundTrip() {
        let (file, name) = batch()
        #expect(FolderFile.read(file.encoded(), replica: replica, name: name) == .complete(file))
        let snapshot = FolderFile(
            kind: .snapshot, replica: replica, incarnation: incarnation, first: 1, last: 500,
            entries: entries(30))
        let snapshotName = FolderFileName(
            FolderFileName.snapshotName(through: 500, tag: FolderFileName.tag(of: incarnation)))
        // A snapshot's entries carry no sequence numbers: it covers everything through its last.
        var expected = snapshot
        expected.entries = snapshot.entries.map {
            SettingEntry(key: $0.key, value: $0.value, version: $0.version, sequence: 0)
        }
        #expect(
            FolderFile.read(snapshot.encoded(), replica: replica, name: snapshotName) == .complete(expected))
    }

    @Test("every cut of a file short of its end reads as incomplete, never as entries")
    func everyCutIsIncomplete() {
        let (file, name) = batch(6)
        let bytes = file.encoded()
        for length in 0..<bytes.count {
            guard case .incomplete = FolderFile.read(Array(bytes[..<length]), replica: replica, name: name)
            else {
                Issue.record("a file cut at \(length) of \(bytes.count) bytes did not read as incomplete")
                return
            }
        }
    }

    @Test("a flipped byte anywhere is found: the file reads as incomplete or refused, never applied")
    func flippedBytes() {
        let (file, name) = batch(6)
        let bytes = file.encoded()
        for index in stride(from: 0, to: bytes.count - 1, by: 3) {
            var damaged = bytes
            damaged[index] ^= 0x04
            if case .complete = FolderFile.read(damaged, replica: replica, name: name) {
                Issue.record("a flip at byte \(index) went unnoticed")
            }
        }
    }

    @Test(
        "whole files that are wrong are refused with the reason: another replica's, a newer format, a name that lies"
    )
    func refusals() {
        let (file, name) = batch()
        let other = ReplicaID.random()
        guard case .invalid(let reason) = FolderFile.read(file.encoded(), replica: other, name: name) else {
            Issue.record("another replica's file was not refused")
            return
        }
        #expect(reason.contains("another replica"))
        let wrongName = FolderFileName(
            FolderFileName.batchName(first: 1, last: 21, tag: FolderFileName.tag(of: incarnation)))
        guard case .invalid = FolderFile.read(file.encoded(), replica: replica, name: wrongName) else {
            Issue.record("a name that does not match the header was not refused")
            return
        }
        var newer = String(decoding: file.encoded(), as: UTF8.self)
        newer = newer.replacingOccurrences(of: "\"version\":1", with: "\"version\":2")
        let lines = newer.split(separator: "\n")
        let body = lines.dropLast().joined(separator: "\n") + "\n"
        let resealed = body + "{\"end\":20,\"checksum\":\"\(FolderFile.checksum(Array(body.utf8)[...]))\"}\n"
        guard case .invalid(let reason) = FolderFile.read(Array(resealed.utf8), replica: replica, name: name)
        else {
            Issue.record("a newer format was not refused")
            return
        }
        #expect(reason.contains("format 2"))
    }

    @Test("a state file reads back as written")
    func state() throws {
        let state = FolderReplicaState(
            replica: replica, incarnation: incarnation, published: 40, considered: 45, sequence: 45,
            digest: 0xdead_beef_0123, read: [ReplicaID.random(): 7, ReplicaID.random(): 0])
        #expect(try FolderReplicaState.read(state.encoded(), replica: replica) == state)
        #expect(throws: SettingsError.self) {
            try FolderReplicaState.read(state.encoded(), replica: .random())
        }
        #expect(throws: SettingsError.self) {
            try FolderReplicaState.read(Array("{\"settingsd\":".utf8), replica: replica)
        }
    }
}
