import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `state.json` in a replica's folder: what the replica last wrote, its digest then, and how
/// far it read every other replica. Only its replica writes it (by rename), so a syncer never
/// sees two machines edit it. From it each replica tells, for every other, whether they agree.
struct FolderReplicaState: Equatable {
    /// The replica.
    var replica: ReplicaID
    /// Its incarnation when it wrote this.
    var incarnation: UUID
    /// Its files cover its local sequence numbers through this.
    var published: Int64
    /// Its local sequence numbers through this were considered for its files (some need none:
    /// entries that came from the folder).
    var considered: Int64
    /// Its local sequence number when it wrote this, when its digest was `digest`.
    var sequence: Int64
    /// Its digest at `sequence` (`Settings.digestValue`).
    var digest: UInt64
    /// How far it had read each other replica's files.
    var read: [ReplicaID: Int64]

    /// The largest state file read.
    static let maximumBytes = 1 << 20

    /// The file's bytes.
    func encoded() -> [UInt8] {
        var cursors: [String: JSONValue] = [:]
        for (replica, through) in read { cursors[replica.description] = .integer(through) }
        let json: JSONValue = .object([
            "settingsd": "folder-state", "version": .integer(Int64(FolderFile.version)),
            "replica": .string(replica.description), "incarnation": .string(incarnation.uuidString),
            "published": .integer(published), "considered": .integer(considered),
            "sequence": .integer(sequence),
            "digest": .string(String(digest, radix: 16)), "read": .object(cursors),
        ])
        var bytes: [UInt8] = []
        json.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Reads a state file found in `replica`'s folder.
    static func read(_ bytes: [UInt8], replica: ReplicaID) throws(SettingsError) -> FolderReplicaState {
        let fields = try JSONFields(JSONValue.parse(bytes), what: "a folder state file")
        guard try fields.string("settingsd") == "folder-state" else {
            throw SettingsError(.protocolError, "it is not a settingsd folder state file")
        }
        guard try fields.integer("version") == Int64(FolderFile.version) else {
            throw SettingsError(.unsupportedVersion, "it is of another folder format version")
        }
        guard try fields.replicaID("replica") == replica else {
            throw SettingsError(.protocolError, "it names another replica than its folder")
        }
        guard let incarnation = UUID(uuidString: try fields.string("incarnation")),
            let digest = UInt64(try fields.string("digest"), radix: 16)
        else { throw SettingsError(.protocolError, "its incarnation or digest is malformed") }
        var read: [ReplicaID: Int64] = [:]
        if case .object(let cursors)? = fields.members["read"] {
            for (name, value) in cursors {
                guard let id = ReplicaID(name), case .integer(let through) = value, through >= 0 else {
                    continue
                }
                read[id] = through
            }
        }
        return FolderReplicaState(
            replica: replica, incarnation: incarnation,
            published: try Arrival.position(try fields.integer("published"), "field 'published'"),
            considered: try Arrival.position(try fields.integer("considered"), "field 'considered'"),
            sequence: try Arrival.position(try fields.integer("sequence"), "field 'sequence'"),
            digest: digest,
            read: read)
    }
}
