package import SettingsStore

extension WireRequest {
    /// The first frame of a session: who is speaking, and which protocol.
    package struct Hello: Sendable, Equatable {
        /// What the connecting side wants to be.
        package enum Role: String, Sendable {
            /// An app or tool making requests (the default).
            case client
            /// Another replica, turning the connection into a sync session (see `docs/SYNC.md`).
            case replica
        }

        /// The protocol version the sender speaks.
        package var version: Int64
        /// Client or replica.
        package var role: Role
        /// A name for logs, optional.
        package var name: String?
        /// For a replica: its id.
        package var replicaID: ReplicaID?
        /// For a replica: its current sequence number.
        package var replicaSequence: Int64 = 0
        /// For a replica: its wall clock when it said hello, in milliseconds since 1970.
        package var clockMilliseconds: UInt64?
        /// For a replica: its incarnations, oldest first (see `Lineage`).
        package var lineage: Lineage?
        /// For a replica: the stamp below which it has collected tombstones.
        package var tombstoneHorizon: HybridTimestamp?
        /// For a replica: the hub namespace it syncs as, if any.
        package var account: SyncAccount?

        /// A client's hello in this build's protocol version.
        package init(version: Int64 = SettingsdVersion.protocolVersion, name: String? = nil) {
            self.version = version
            self.role = .client
            self.name = name
        }

        /// A replica's hello in this build's replica protocol version.
        package init(
            replica: ReplicaID, sequence: Int64, clockMilliseconds: UInt64, lineage: Lineage,
            tombstoneHorizon: HybridTimestamp = .zero, account: SyncAccount? = nil
        ) {
            self.version = SettingsdVersion.replicaProtocolVersion
            self.role = .replica
            self.replicaID = replica
            self.replicaSequence = sequence
            self.clockMilliseconds = clockMilliseconds
            self.lineage = lineage
            self.tombstoneHorizon = tombstoneHorizon
            self.account = account
        }

        /// Throws `unsupportedVersion` unless the sender speaks this build's protocol for its role.
        package func checkVersion() throws(SettingsError) {
            let supported =
                role == .replica ? SettingsdVersion.replicaProtocolVersion : SettingsdVersion.protocolVersion
            guard version == supported else {
                throw SettingsError(
                    .unsupportedVersion,
                    "\(role.rawValue) protocol version \(version) is not supported; this build speaks \(supported)"
                )
            }
        }

        package init(fields: JSONFields) throws(SettingsError) {
            version = try fields.integer("version")
            name = try fields.optionalString("name")
            let roleName = try fields.optionalString("role") ?? Role.client.rawValue
            guard let role = Role(rawValue: roleName) else {
                throw SettingsError(
                    .protocolError,
                    "role '\(roleName.debugDescriptionTruncated)' is not served by this daemon")
            }
            self.role = role
            guard role == .replica else { return }
            replicaID = try fields.replicaID("replica")
            replicaSequence = try Arrival.position(fields.integer("sequence"), "field 'sequence'")
            clockMilliseconds = try fields.optionalInteger("clock").map { UInt64(clamping: $0) }
            lineage = try Lineage(json: fields.members["lineage"])
            tombstoneHorizon = try fields.optionalInteger("horizon").map { horizon throws(SettingsError) in
                HybridTimestamp(rawValue: UInt64(try Arrival.position(horizon, "field 'horizon'")))
            }
            account = try SyncAccount(json: fields.members["account"])
        }

        func write(to members: inout [String: JSONValue]) {
            members["version"] = .integer(version)
            members["role"] = .string(role.rawValue)
            if let name { members["name"] = .string(name) }
            if let replicaID {
                members["replica"] = .string(replicaID.description)
                members["sequence"] = .integer(replicaSequence)
            }
            if let clockMilliseconds { members["clock"] = .integer(Int64(clamping: clockMilliseconds)) }
            if let lineage { members["lineage"] = lineage.json }
            if let tombstoneHorizon {
                members["horizon"] = .integer(Int64(clamping: tombstoneHorizon.rawValue))
            }
            if let account { members["account"] = account.json }
        }
    }
}
