/// What a daemon reports about itself (`status`).
public struct DaemonStatus: Sendable {
    /// The daemon's replica id.
    public let replica: ReplicaID
    /// Keys holding values.
    public let keys: Int
    /// Bytes those keys and values take.
    public let bytes: Int
    /// The replica's sequence number.
    public let sequence: Int64
    /// Connected clients.
    public let clients: Int
    /// Active watches across clients.
    public let watches: Int
    /// The database file.
    public let database: String?
    /// The daemon's pid.
    public let pid: Int32
    /// Seconds since the daemon started.
    public let uptimeSeconds: Double
    /// The daemon's version.
    public let version: String
    /// The fingerprint of the replica's content (equal on converged replicas).
    public let digest: String?
    /// The peers' ids, with whether each is connected now.
    public let peers: [(replica: ReplicaID, isConnected: Bool)]

    /// Reads a `status` result.
    public init(fields: [String: JSONValue]) throws(SettingsError) {
        let fields = try JSONFields(.object(fields), what: "a status result")
        guard let replica = ReplicaID(try fields.string("replica")) else {
            throw SettingsError(.protocolError, "field 'replica' must be a replica id")
        }
        self.replica = replica
        keys = Int(try fields.integer("keys"))
        bytes = Int(try fields.integer("bytes"))
        sequence = try fields.integer("sequence")
        clients = Int(try fields.integer("clients"))
        watches = Int(try fields.integer("watches"))
        database = try fields.optionalString("database")
        pid = Int32(truncatingIfNeeded: try fields.integer("pid"))
        switch fields.members["uptimeSeconds"] {
        case .double(let seconds)?: uptimeSeconds = seconds
        case .integer(let seconds)?: uptimeSeconds = Double(seconds)
        default: uptimeSeconds = 0
        }
        version = try fields.string("version")
        digest = try fields.optionalString("digest")
        var peers: [(replica: ReplicaID, isConnected: Bool)] = []
        if case .array(let entries)? = fields.members["peers"] {
            for entry in entries {
                guard case .string(let id)? = entry["replica"], let replica = ReplicaID(id) else { continue }
                peers.append((replica, entry["connected"] == .bool(true)))
            }
        }
        self.peers = peers
    }
}
