/// The durable backend: one SQLite database in WAL mode, with prepared statements reused for
/// every commit.
final class SQLiteBackend: SettingsBackend {
    private let connection: SQLiteConnection
    private let upsert: SQLiteStatement
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let saveCursor: SQLiteStatement
    private var lastReplica: (id: ReplicaID, bytes: [UInt8])?
    private let isReadOnly: Bool

    /// The file has been checked (`DatabaseHeader`) before this opens it for writing.
    convenience init(path: String, durability: Durability) throws(SettingsError) {
        let connection = try SQLiteConnection(path: path)
        // The first statement reads the header, so a damaged file fails right here, unchanged.
        try Schema.migrator.check(connection)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        try Schema.migrator.migrate(connection)
        try self.init(connection: connection, isReadOnly: false)
    }

    /// Opens `path` for reading only; when the folder does not let this user create the WAL's
    /// shared-memory file, the file is read as immutable (a consistent image of its last commit).
    convenience init(readingPath path: String) throws(SettingsError) {
        var connection = try SQLiteConnection(path: path, access: .readOnly)
        do throws(SettingsError) {
            try Schema.migrator.check(connection, requireCurrent: true)
        } catch  where error.code == .readOnly || error.code == .io {
            connection = try SQLiteConnection(path: path, access: .immutable)
            try Schema.migrator.check(connection, requireCurrent: true)
        }
        try self.init(connection: connection, isReadOnly: true)
    }

    private init(connection: SQLiteConnection, isReadOnly: Bool) throws(SettingsError) {
        self.connection = connection
        self.isReadOnly = isReadOnly
        upsert = try connection.prepare(
            """
            INSERT INTO entries (key, value, hlc, replica, seq) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (key) DO UPDATE SET
                value = excluded.value, hlc = excluded.hlc, replica = excluded.replica, seq = excluded.seq
            """)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        saveCursor = try connection.prepare(
            """
            INSERT INTO peers (replica, received_seq, last_contact_ms) VALUES (?1, ?2, ?3)
            ON CONFLICT (replica) DO UPDATE SET
                received_seq = excluded.received_seq, last_contact_ms = excluded.last_contact_ms
            """)
    }

    func load() throws(SettingsError) -> LoadedReplica {
        // Everything is read before anything is written: a damaged file fails here untouched.
        let existingID = try storedReplicaID()
        let scan = try connection.prepare("SELECT key, value, hlc, replica, seq FROM entries")
        var entries: [SettingEntry] = []
        if let count = try connection.scalar("SELECT count(*) FROM entries") {
            entries.reserveCapacity(Int(count))
        }
        var lastReplica = existingID ?? ReplicaID.random()
        while try scan.step() {
            let key = scan.string(at: 0)
            let value: SettingValue?
            do throws(SettingsError) {
                value =
                    scan.isNull(at: 1)
                    ? nil
                    : try scan.withBytes(at: 1) { (bytes) throws(SettingsError) in
                        try SettingValue(decoding: bytes)
                    }
            } catch {
                throw SettingsError(
                    .corruptDatabase, "'\(connection.path)': \(error.message)", key: key,
                    path: connection.path)
            }
            // Most rows come from a handful of replicas: reuse the last decoded id when bytes match.
            let replica = try scan.withBytes(at: 3) { (bytes) throws(SettingsError) -> ReplicaID in
                if bytes.elementsEqual(lastReplica.bytes) { return lastReplica }
                guard let decoded = ReplicaID(bytes: bytes) else {
                    throw SettingsError(
                        .corruptDatabase, "'\(connection.path)': bad replica id for '\(key)'",
                        key: key, path: connection.path)
                }
                return decoded
            }
            lastReplica = replica
            let version = SettingVersion(
                timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: scan.int64(at: 2))),
                replica: replica)
            entries.append(
                SettingEntry(key: key, value: value, version: version, sequence: scan.int64(at: 4)))
        }
        try mergeKeyTwins(&entries)
        let peerCursors = try loadPeerCursors()
        let replicaID: ReplicaID
        if let existingID {
            replicaID = existingID
        } else if isReadOnly {
            replicaID = lastReplica
        } else {
            replicaID = try createReplicaID()
        }
        return LoadedReplica(replicaID: replicaID, entries: entries, peerCursors: peerCursors)
    }

    func write(_ entries: [SettingEntry], cursor: PeerCursor?) throws(SettingsError) {
        guard !isReadOnly else {
            throw SettingsError(
                .readOnly, "'\(connection.path)' is open for reading only", path: connection.path)
        }
        guard entries.count + (cursor == nil ? 0 : 1) > 1 else {
            // A single statement commits on its own: no explicit transaction to pay for.
            if let entry = entries.first { try store(entry) }
            if let cursor { try store(cursor) }
            return
        }
        try begin.run()
        do {
            for entry in entries { try store(entry) }
            if let cursor { try store(cursor) }
            try commit.run()
        } catch {
            if connection.isInTransaction {
                try? connection.execute("ROLLBACK")  // The original error is the one worth reporting.
            }
            throw error
        }
    }

    /// Files written before keys had one identity may hold one key as several rows, in different
    /// Unicode normal forms: keep the newest version of each under the NFC key, in one commit.
    private func mergeKeyTwins(_ entries: inout [SettingEntry]) throws(SettingsError) {
        guard entries.contains(where: { !KeyIdentity.isNormalized($0.key) }) else { return }
        var winners: [String: SettingEntry] = [:]
        defer { entries = Array(winners.values) }
        var strays: [String] = []
        var affected: Set<String> = []
        for entry in entries {
            let key = KeyIdentity.normalize(entry.key)
            if !key.utf8.elementsEqual(entry.key.utf8) {
                strays.append(entry.key)
                affected.insert(key)
            }
            if let current = winners[key], current.version > entry.version { continue }
            winners[key] = SettingEntry(
                key: key, value: entry.value, version: entry.version, sequence: entry.sequence)
        }
        guard !isReadOnly else { return }
        let delete = try connection.prepare("DELETE FROM entries WHERE key = ?1")
        try connection.transaction { () throws(SettingsError) in
            for key in strays {
                try delete.bind(key, at: 1)
                try delete.run()
            }
            for key in affected { if let entry = winners[key] { try store(entry) } }
        }
    }

    private func store(_ cursor: PeerCursor) throws(SettingsError) {
        try saveCursor.bind(replicaBytes(cursor.peer), at: 1)
        try saveCursor.bind(cursor.receivedSequence, at: 2)
        try saveCursor.bind(Int64(clamping: cursor.contactMilliseconds), at: 3)
        try saveCursor.run()
    }

    private func loadPeerCursors() throws(SettingsError) -> [ReplicaID: Int64] {
        let select = try connection.prepare("SELECT replica, received_seq FROM peers")
        var cursors: [ReplicaID: Int64] = [:]
        while try select.step() {
            if let peer = ReplicaID(bytes: select.bytes(at: 0)) { cursors[peer] = select.int64(at: 1) }
        }
        return cursors
    }

    private func store(_ entry: SettingEntry) throws(SettingsError) {
        try upsert.bind(entry.key, at: 1)
        if let value = entry.value {
            try upsert.bind(value.encoded(), at: 2)
        } else {
            try upsert.bindNull(at: 2)
        }
        try upsert.bind(Int64(bitPattern: entry.version.timestamp.rawValue), at: 3)
        try upsert.bind(replicaBytes(entry.version.replica), at: 4)
        try upsert.bind(entry.sequence, at: 5)
        try upsert.run()
    }

    /// The stored form of a replica id, cached because most writes come from one replica.
    private func replicaBytes(_ replica: ReplicaID) -> [UInt8] {
        if let lastReplica, lastReplica.id == replica { return lastReplica.bytes }
        let bytes = replica.bytes
        lastReplica = (replica, bytes)
        return bytes
    }

    private func storedReplicaID() throws(SettingsError) -> ReplicaID? {
        let select = try connection.prepare("SELECT value FROM meta WHERE name = 'replica_id'")
        guard try select.step() else { return nil }
        guard let id = ReplicaID(bytes: select.bytes(at: 0)) else {
            throw SettingsError(
                .corruptDatabase, "'\(connection.path)' has a malformed replica id", path: connection.path)
        }
        return id
    }

    private func createReplicaID() throws(SettingsError) -> ReplicaID {
        let id = ReplicaID.random()
        let insert = try connection.prepare("INSERT INTO meta (name, value) VALUES ('replica_id', ?1)")
        try insert.bind(id.bytes, at: 1)
        try insert.run()
        return id
    }
}
