package import SettingsStore

/// The answer to a `hello`: who answers and in which protocol and, for a replica, where the
/// exchange starts. The one form both sides of every connection build and read (the daemon and
/// its clients, a replica that dials and one that accepts), so the handshake is negotiated once.
package struct Welcome: Sendable, Equatable {
    /// What a replica learns of the one that accepted it.
    package struct ReplicaState: Sendable, Equatable {
        /// The last of the dialling replica's sequence numbers the answering one applied.
        package var cursor: Int64
        /// The answering replica's own sequence number.
        package var sequence: Int64
        /// Its wall clock when it answered, in milliseconds since 1970.
        package var clockMilliseconds: UInt64?
        /// Its incarnations, oldest first.
        package var lineage: Lineage?
        /// The stamp below which it has collected tombstones.
        package var tombstoneHorizon: HybridTimestamp
        /// The hub namespace it syncs as, if any.
        package var account: SyncAccount? = nil
        /// The name it goes by (its machine's host name, or what it was given), if any.
        package var name: String? = nil

        package init(
            cursor: Int64, sequence: Int64, clockMilliseconds: UInt64?, lineage: Lineage?,
            tombstoneHorizon: HybridTimestamp, account: SyncAccount? = nil
        ) {
            self.cursor = cursor
            self.sequence = sequence
            self.clockMilliseconds = clockMilliseconds
            self.lineage = lineage
            self.tombstoneHorizon = tombstoneHorizon
            self.account = account
        }
    }

    /// The protocol version the answering side speaks for the role asked.
    var version: Int64
    /// The answering replica (the daemon's store, or the accepting replica).
    package var replica: ReplicaID
    /// For a client: the daemon's name and version.
    var server: String?
    /// For a client: the largest frame the daemon accepts.
    var maximumFrameBytes: Int?
    /// For a replica: where the exchange starts.
    package var replicaState: ReplicaState?

    /// What the daemon answers a client.
    package init(clientOf replica: ReplicaID, maximumFrameBytes: Int?) {
        version = SettingsdVersion.protocolVersion
        self.replica = replica
        server = "settingsd \(SettingsdVersion.current)"
        self.maximumFrameBytes = maximumFrameBytes
    }

    /// What an accepting replica answers a dialling one.
    package init(replica: ReplicaID, state: ReplicaState) {
        version = SettingsdVersion.replicaProtocolVersion
        self.replica = replica
        replicaState = state
    }

    /// Reads an answer to a hello of `role`, checking that it speaks this build's protocol.
    ///
    /// - Throws: `unsupportedVersion` naming `address` for another version, `protocolError` for
    ///   a malformed answer.
    package init(fields: JSONFields, role: WireRequest.Hello.Role, address: String) throws(SettingsError) {
        version = try fields.integer("version")
        let supported =
            role == .replica ? SettingsdVersion.replicaProtocolVersion : SettingsdVersion.protocolVersion
        guard version == supported else {
            throw SettingsError(
                .unsupportedVersion,
                "the \(role == .replica ? "replica" : "daemon") at '\(address)' speaks \(role.rawValue) protocol \(version), this build \(supported)"
            )
        }
        replica = try fields.replicaID("replica")
        server = try fields.optionalString("server")
        maximumFrameBytes = try fields.optionalInteger("maxFrame").map { Int(clamping: $0) }
        guard role == .replica else { return }
        replicaState = ReplicaState(
            cursor: try Arrival.position(fields.integer("cursor"), "field 'cursor'"),
            sequence: try Arrival.position(fields.integer("sequence"), "field 'sequence'"),
            clockMilliseconds: try fields.optionalInteger("clock").map { UInt64(clamping: $0) },
            lineage: try Lineage(json: fields.members["lineage"]),
            tombstoneHorizon: HybridTimestamp(
                rawValue: UInt64(clamping: try fields.optionalInteger("horizon") ?? 0)),
            account: try SyncAccount(json: fields.members["account"]))
        replicaState?.name = try fields.optionalString("name")
    }

    /// The answer's fields, as the wire carries them.
    package var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "version": .integer(version), "replica": .string(replica.description),
        ]
        if let server {
            fields["server"] = .string(server)
            fields["roles"] = .array([.string("client"), .string("replica")])
        }
        if let maximumFrameBytes { fields["maxFrame"] = .integer(Int64(maximumFrameBytes)) }
        if let state = replicaState {
            fields["cursor"] = .integer(state.cursor)
            fields["sequence"] = .integer(state.sequence)
            if let clock = state.clockMilliseconds { fields["clock"] = .integer(Int64(clamping: clock)) }
            if let lineage = state.lineage { fields["lineage"] = lineage.json }
            fields["horizon"] = .integer(Int64(clamping: state.tombstoneHorizon.rawValue))
            if let account = state.account { fields["account"] = account.json }
            if let name = state.name { fields["name"] = .string(name) }
        }
        return fields
    }
}
