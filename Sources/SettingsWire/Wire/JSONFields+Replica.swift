package import SettingsStore

extension JSONFields {
    /// The replica id in field `name`.
    package func replicaID(_ name: String) throws(SettingsError) -> ReplicaID {
        guard let id = ReplicaID(try string(name)) else {
            throw SettingsError(.protocolError, "field '\(name)' must be a replica id")
        }
        return id
    }
}
