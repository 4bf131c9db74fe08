package import SettingsStore
import SettingsWire

/// The statements of a link that polls (through a pooler, or without `LISTEN`): the counter,
/// as a fast-path call while it can (`HubPollCall`), and the poll plan now and then.
extension HubNamespace {
    /// The namespace's last hub sequence number.
    ///
    /// Through a pooler it goes through the simple query protocol, the namespace quoted into
    /// the text once (`pollStatement`), which costs the server less than a statement with
    /// parameters there, since nothing stays prepared; a direct connection runs it prepared.
    package func lastSequence() throws(SettingsError) -> Int64 {
        let rows = try counterRows(numbering: false)
        return try counter(in: rows)
    }

    /// What a poll found.
    package struct Poll: Equatable {
        /// Whether the namespace's counter is no longer the one the poll was given.
        package var moved: Bool
        /// Whether a fast-path call answered it (otherwise the counter's statement did).
        package var byCall: Bool
    }

    /// Whether the namespace's counter moved from `counter`: a fast-path call of
    /// `settingsd.moved` while `call` has its number, the counter's statement otherwise (which
    /// asks the number when `call` wants it). A call the hub refuses is followed by the
    /// statement at once; a broken or stalled connection throws.
    package func poll(from counter: Int64, call: inout HubPollCall) throws(SettingsError) -> Poll {
        if let function = call.number {
            do {
                let answer = try connection.callInteger(
                    function, [.text(name), .int64(counter)], what: "settingsd.moved(name, bigint)")
                call.answered()
                // Anything but 0 is taken for a move: a hub that says so costs itself a pull.
                return Poll(moved: answer != 0, byCall: true)
            } catch  where error.code != .connectionLost && error.code != .timeout {
                call.refused(denied: error.code == .accessDenied)
            }
        }
        let numbering = call.asksNumber
        let rows = try counterRows(numbering: numbering)
        if numbering {
            call.numbered(
                try Self.number(in: rows, column: 1, "settingsd.moved's number", prepared: prepared))
        }
        return Poll(moved: try self.counter(in: rows) != counter, byCall: false)
    }

    /// The namespace's poll plan (`settingsd.poll_plan`), which also tells the hub, once a day,
    /// that `replica` is still here.
    package func pollPlan(for replica: ReplicaID) throws(SettingsError) -> HubPollPlan {
        let rows = try connection.execute(
            "SELECT * FROM settingsd.poll_plan($1, $2)", [.text(name), .bytes(replica.bytes)])
        guard rows.count == 1, !rows.isNull(0, 0) else {
            throw SettingsError(.protocolError, "the hub's poll plan for '\(name)' is missing")
        }
        func number(_ column: Int) -> Int64? { rows.isNull(0, column) ? nil : rows.int64(0, column) }
        return HubPollPlan(
            counter: try Arrival.position(rows.int64(0, 0), "the hub's counter for '\(name)'"),
            edits: number(1), replicas: number(2), rate: number(3))
    }

    /// Whether this connection runs statements prepared (a direct one) or as simple queries.
    private var prepared: Bool { connection.preparesStatements }

    /// The counter's statement, with the fast-path function's number when `numbering`.
    private func counterRows(numbering: Bool) throws(SettingsError) -> PostgresRows {
        let sql =
            (prepared ? "SELECT settingsd.counter($1)" : pollStatement)
            + (numbering ? ", " + Self.functionColumn : "")
        guard prepared else { return try connection.query(sql) }
        return try connection.execute(sql, [.text(name)])
    }

    /// The counter in column 0 of the first row (0 when the namespace has none).
    private func counter(in rows: PostgresRows) throws(SettingsError) -> Int64 {
        let what = "the hub's counter for '\(name)'"
        guard rows.count == 1, let counter = try Self.number(in: rows, column: 0, what, prepared: prepared)
        else { return 0 }
        return try Arrival.position(counter, what)
    }

    /// The number of `settingsd.moved(name, bigint)`: NULL where it is missing, or where it does
    /// not return one `integer`, whose four bytes are all a fast-path call takes (libpq waits
    /// for more than a longer answer, and would wait until the stall time-out).
    private static let functionColumn = """
        (SELECT p.oid::pg_catalog.int8 FROM pg_catalog.pg_proc AS p \
        WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('settingsd.moved(name, bigint)') \
        AND p.prorettype OPERATOR(pg_catalog.=) 'pg_catalog.int4'::pg_catalog.regtype AND NOT p.proretset)
        """

    /// A number in `column` of the first row: nil when NULL. Text from the hub is hub input:
    /// digits, or refused.
    private static func number(in rows: PostgresRows, column: Int, _ what: String, prepared: Bool)
        throws(SettingsError) -> Int64?
    {
        guard !rows.isNull(0, column) else { return nil }
        guard let value = prepared ? rows.int64(0, column) : Int64(rows.text(0, column)) else {
            throw SettingsError(
                .protocolError, "\(what) is not a number: '\(rows.text(0, column).debugDescriptionTruncated)'"
            )
        }
        return value
    }
}
