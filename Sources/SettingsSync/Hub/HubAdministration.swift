package import SettingsStore
import SettingsWire

/// What `settingsd hub init` and `settingsd hub status` do, for any tool.
package enum HubAdministration {
    /// What a role sees of a hub.
    package struct Report: Sendable, Equatable {
        /// One namespace the role may use.
        package struct Namespace: Sendable, Equatable {
            /// Its name (a role name).
            package let name: String
            /// Keys holding values.
            package let keys: Int
            /// Its last hub sequence number.
            package let lastSequence: Int64
        }

        /// One replica that synced a namespace.
        package struct Replica: Sendable, Equatable {
            /// The namespace.
            package let namespace: String
            /// The replica's id.
            package let replica: ReplicaID
            /// The last of its sequence numbers it pushed.
            package let pushedThrough: Int64
            /// When it was last seen, as PostgreSQL prints it.
            package let lastSeen: String
            /// The name it goes by, when it said one (schema 17 on).
            package var name: String? = nil
        }

        /// The connection string without its password.
        package let address: String
        /// The role connected as.
        package let role: String
        /// The hub's schema version.
        package let schemaVersion: Int64
        /// The polls a second the machines of one namespace make together at most
        /// (`HubPollPlan`).
        package let pollRate: Int64
        /// The namespaces the role may see.
        package let namespaces: [Namespace]
        /// The replicas of those namespaces, most recently seen first.
        package let replicas: [Replica]
    }

    /// Creates or upgrades the hub schema at `url` (idempotent), and sets its poll rate when
    /// `pollRate` is given (`HubPollPlan.rates`); returns the versions before and after. The
    /// role needs the right to create a schema in the database.
    package static func initialize(url: String, pollRate: Int64? = nil) throws(SettingsError)
        -> (before: Int64, after: Int64)
    {
        if let pollRate, !HubPollPlan.rates.contains(pollRate) {
            throw SettingsError(
                .invalidValue,
                "a hub's poll rate is \(pollRate): it must be polls a second from \(HubPollPlan.rates.lowerBound) to \(HubPollPlan.rates.upperBound)"
            )
        }
        let connection = try connect(url)
        let before = try HubSchema.migrate(connection)
        if let pollRate {
            try connection.execute(
                "UPDATE settingsd.meta SET value = $1 WHERE name = 'poll_rate'", [.text(String(pollRate))])
        }
        return (before, HubSchema.current)
    }

    /// What the role of `url` sees: its namespaces with their key counts, and the replicas
    /// last seen in them.
    package static func report(url: String) throws(SettingsError) -> Report {
        let connection = try connect(url)
        let schemaVersion = try HubSchema.check(connection)
        let role = try connection.execute("SELECT current_user::text").text(0, 0)
        let namespaces = try connection.execute(
            """
            SELECT n.namespace::text, n.last_seq,
                (SELECT count(*) FROM settingsd.entries AS e WHERE e.namespace = n.namespace AND e.value IS NOT NULL)
            FROM settingsd.namespaces AS n ORDER BY n.namespace
            """)
        let named = schemaVersion >= HubSchema.names.version
        let replicas = try connection.execute(
            """
            SELECT r.namespace::text, r.replica, r.pushed_seq, r.last_seen::text, \(named ? "m.replica_name" : "NULL::text")
            FROM settingsd.replicas AS r
            \(named ? "LEFT JOIN settingsd.replica_names AS m ON m.namespace = r.namespace AND m.replica = r.replica" : "")
            ORDER BY r.last_seen DESC LIMIT 100
            """)
        let rate = try connection.execute(
            "SELECT value FROM settingsd.meta WHERE name = 'poll_rate'")
        return Report(
            address: connection.displayName, role: role, schemaVersion: schemaVersion,
            pollRate: HubPollPlan(
                counter: 0, edits: nil, replicas: nil,
                rate: rate.count == 1 ? Int64(rate.text(0, 0)) : nil
            ).rate,
            namespaces: (0..<namespaces.count).map { row in
                Report.Namespace(
                    name: namespaces.text(row, 0), keys: Int(namespaces.int64(row, 2)),
                    lastSequence: namespaces.int64(row, 1))
            },
            replicas: (0..<replicas.count).compactMap { row in
                ReplicaID(bytes: replicas.bytes(row, 1)).map { replica in
                    Report.Replica(
                        namespace: replicas.text(row, 0), replica: replica,
                        pushedThrough: replicas.int64(row, 2),
                        lastSeen: replicas.text(row, 3),
                        name: replicas.isNull(row, 4) ? nil : replicas.text(row, 4))
                }
            })
    }

    /// Connects to `url`, settingsd's own options (`settingsd_pool`…) left out: the same URL
    /// serves `--hub` and these commands.
    static func connect(_ url: String) throws(SettingsError) -> PostgresConnection {
        try PostgresConnection(
            conninfo: HubURL(url).checkedConninfo(),
            defaults: ["connect_timeout": "10", "application_name": "settingsd"])
    }
}
