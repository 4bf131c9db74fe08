import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

@Suite("Sealed folders: no key name or value reaches the folder, and tampered entries are refused")
struct SealedFolderTests {
    let directory = TemporaryDirectory()

    /// Every byte of every file under `folder`, as text.
    func contents(of folder: String) throws -> String {
        var text = ""
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            text += String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        }
        return text
    }

    @Test("two machines with one key converge through a sealed folder; no file holds a name or value")
    func convergeWithoutPlaintext() async throws {
        let folder = directory.file("Sync")
        let keyring = SyncKeyring(current: .random())
        let marker = "mk\(UInt32.random(in: 0...UInt32.max))"
        let ana = Settings(inMemoryWith: .init())
        try ana.transaction { transaction in
            for index in 0..<1_000 {
                try transaction.set("\(marker)-value-\(index)", forKey: "\(marker).name\(index)")
            }
        }
        try ana.removeValue(forKey: "\(marker).name3")
        let ben = Settings(inMemoryWith: .init())
        try ben.set("\(marker)-ben", forKey: "\(marker).ben")
        let anaLink = Replicator(settings: ana).sync(withFolder: folder, keyring: keyring)
        let benLink = Replicator(settings: ben).sync(withFolder: folder, keyring: keyring)
        defer {
            anaLink.stop()
            benLink.stop()
        }
        try await waitUntil(timeout: 60) {
            ben.value(forKey: "\(marker).name999") != nil && ana.value(forKey: "\(marker).ben") != nil
                && ana.digest == ben.digest
        }
        #expect(ben.value(forKey: "\(marker).name3") == nil)
        try await waitUntil {
            benLink.status.replicas.first?.agreement == "agreed"
                && anaLink.status.sealedUnder == keyring.keyID
        }
        let files = try contents(of: folder)
        #expect(files.contains("\"sealed\":\"\(keyring.keyID)\""))
        #expect(!files.contains(marker), "a name or value reached the folder in the clear")
    }

    @Test("a tampered entry is refused alone, a plain file is refused whole, and neither is applied")
    func tampering() async throws {
        let folder = directory.file("Sync")
        let keyring = SyncKeyring(current: .random())
        let ana = Settings(inMemoryWith: .init())
        try ana.transaction { transaction in
            try transaction.set("a", forKey: "kept")
            try transaction.set("b", forKey: "flipped")
        }
        let anaLink = Replicator(settings: ana).sync(withFolder: folder, keyring: keyring)
        try await waitUntil { anaLink.status.publishedThrough > 0 && anaLink.status.sealedUnder != nil }
        anaLink.stop()
        // Flip a byte inside the sealed value of "flipped", and write the checksum again, as
        // someone who edits the file would.
        let own = folder + "/" + ana.replicaID.description
        let name = try #require(try FileSystem.files(in: own).first { $0.hasSuffix(".jsonl") })
        let bytes = try FileSystem.read(own + "/" + name)
        var lines = bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
        let sealer = keyring.sealer(for: FolderConnector.sealTarget)
        let target = try #require(
            lines.firstIndex { String(decoding: $0, as: UTF8.self).contains(sealer.keyID(for: "flipped")) })
        var line = String(decoding: lines[target], as: UTF8.self)
        let valueStart = try #require(line.range(of: "\",\"")).upperBound
        let position = line.index(valueStart, offsetBy: 20)
        line.replaceSubrange(position...position, with: line[position] == "A" ? "B" : "A")
        lines[target] = Array(line.utf8)
        let body = lines.dropLast().map { $0 + [UInt8(ascii: "\n")] }.joined()
        let trailer = "{\"checksum\":\"\(FolderFile.checksum(Array(body)[...]))\",\"end\":2}\n"
        try FileSystem.writeAtomically(Array(body) + Array(trailer.utf8), to: own + "/" + name)
        // A file in the clear from a third replica.
        let intruder = ReplicaID.random()
        try FileSystem.createDirectories(folder + "/" + intruder.description)
        let plain = FolderFile(
            kind: .batch, replica: intruder, incarnation: UUID(), first: 1, last: 1,
            entries: [
                SettingEntry(
                    key: "injected", value: .string("x"),
                    version: SettingVersion(
                        timestamp: HybridTimestamp(milliseconds: 1, counter: 0), replica: intruder),
                    sequence: 1)
            ])
        let plainName = FolderFileName.batchName(
            first: 1, last: 1, tag: FolderFileName.tag(of: plain.incarnation))
        try FileSystem.writeAtomically(
            plain.encoded(), to: folder + "/" + intruder.description + "/" + plainName)

        let ben = Settings(inMemoryWith: .init())
        let benLink = Replicator(settings: ben).sync(withFolder: folder, keyring: keyring)
        defer { benLink.stop() }
        try await waitUntil { ben.value(forKey: "kept") != nil && benLink.status.refusedFiles > 0 }
        #expect(ben.value(forKey: "kept") == .string("a"), "the other entries of the file still apply")
        #expect(ben.value(forKey: "flipped") == nil)
        #expect(ben.value(forKey: "injected") == nil)
        #expect(benLink.status.sealedRowsRefused == 1)
        #expect(benLink.status.lastSealRefusal?.contains("does not verify") == true)
    }

    @Test("a machine with another key, or none, is refused and writes nothing into a sealed folder")
    func wrongKeyIsRefused() async throws {
        let folder = directory.file("Sync")
        let keyring = SyncKeyring(current: .random())
        let ana = Settings(inMemoryWith: .init())
        try ana.set("secret", forKey: "token")
        let anaLink = Replicator(settings: ana).sync(withFolder: folder, keyring: keyring)
        defer { anaLink.stop() }
        try await waitUntil { anaLink.status.publishedThrough > 0 && anaLink.status.sealedUnder != nil }
        for (stranger, plain) in [(SyncKeyring(current: .random()), false), (nil, false), (keyring, true)] {
            let carl = Settings(inMemoryWith: .init())
            try carl.set("mine", forKey: "carl.only")
            let link = Replicator(settings: carl).sync(withFolder: folder, keyring: stranger, isPlain: plain)
            try await waitUntil { link.status.lastError?.contains("end-to-end encrypted") == true }
            link.stop()
            #expect(carl.value(forKey: "token") == nil)
            #expect(
                !FileManager.default.fileExists(
                    atPath: folder + "/" + carl.replicaID.description + "/state.json"))
        }
    }

    @Test(
        "a plain folder becomes sealed: each machine writes its files again sealed when it starts with the key"
    )
    func sealingAPlainFolder() async throws {
        let folder = directory.file("Sync")
        let ana = Settings(inMemoryWith: .init())
        try ana.set("plain-marker-value", forKey: "plain.marker")
        var anaLink = Replicator(settings: ana).sync(withFolder: folder)
        try await waitUntil { anaLink.status.publishedThrough > 0 }
        #expect(try contents(of: folder).contains("plain-marker-value"))
        anaLink.stop()
        let keyring = SyncKeyring(current: .random())
        anaLink = Replicator(settings: ana).sync(withFolder: folder, keyring: keyring)
        defer { anaLink.stop() }
        try await waitUntil {
            anaLink.status.sealedUnder != nil && (try? contents(of: folder).contains("plain-marker")) == false
        }
        let ben = Settings(inMemoryWith: .init())
        let benLink = Replicator(settings: ben).sync(withFolder: folder, keyring: keyring)
        defer { benLink.stop() }
        try await waitUntil { ben.value(forKey: "plain.marker") == .string("plain-marker-value") }
    }
}
