import SettingsStore

extension HubNamespace {
    /// Tells the hub the name `replica` goes by here and returns the names every replica of the
    /// namespace goes by; nothing on a hub older than schema 17 (`schemaVersion`: the hub's,
    /// which keeps no names before it).
    func exchangeNames(_ name: String?, of replica: ReplicaID, schemaVersion: Int64) throws(SettingsError)
        -> [ReplicaID: String]
    {
        guard schemaVersion >= HubSchema.names.version else { return [:] }
        if let name {
            try connection.execute(
                "SELECT settingsd.name_replica($1, $2, $3)",
                [.text(self.name), .bytes(replica.bytes), .text(name)])
        }
        let rows = try connection.execute(
            "SELECT replica, replica_name FROM settingsd.replica_names WHERE namespace = $1",
            [.text(self.name)])
        var names: [ReplicaID: String] = [:]
        for row in 0..<rows.count {
            // Hub input like any other: an id that is no id is left out.
            guard let id = ReplicaID(bytes: rows.bytes(row, 0)) else { continue }
            names[id] = rows.text(row, 1)
        }
        return names
    }
}
