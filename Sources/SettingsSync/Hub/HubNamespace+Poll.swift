package import SettingsStore
import SettingsWire

/// The poll of a link that polls (through a pooler, or without `LISTEN`): the namespace's
/// counter, the hub's load now and then, and on a quiet hub a quiet check (`HubQuietCheck`).
extension HubNamespace {
    /// The namespace's last hub sequence number.
    ///
    /// A link that polls through a pooler asks this every few seconds, and a fleet's idle load
    /// on PostgreSQL is little else: there it goes through the simple query protocol, the
    /// namespace quoted into the text once (`pollStatement`), which costs the server about a
    /// sixth less than a statement with parameters. A direct connection runs it prepared.
    package func lastSequence() throws(SettingsError) -> Int64 {
        try poll(readingLoad: false).counter
    }

    /// The namespace's last hub sequence number and, when `readingLoad`, the transactions the
    /// hub's database has committed and rolled back so far (`pg_stat_database`, nil when the
    /// statistics are off), in one statement: a polling link's measure of the hub's load
    /// (`PollSchedule.measured`) costs no transaction of its own.
    package func poll(readingLoad: Bool) throws(SettingsError) -> (counter: Int64, transactions: Int64?) {
        let rows = try run(counterStatement(looking: false, readingLoad: readingLoad), namespaced: true)
        return try read(counterFrom: rows, readingLoad: readingLoad)
    }

    /// What a polling link's poll found (`poll(readingLoad:quiet:)`).
    package struct Poll {
        /// The namespace's counter.
        package var counter: Int64
        /// The hub database's transactions so far, when the poll read the load.
        package var transactions: Int64?
        /// How a quiet check answered it (nil: none did): the server's snapshot alone, unchanged
        /// since the baseline, which vouches for the counter.
        package var quietCheck: HubQuietCheck.Kind?

        /// Whether a quiet check answered it.
        package var checkedQuietly: Bool { quietCheck != nil }
    }

    /// A polling link's poll: while `quiet` has a baseline, the server's snapshot alone, which
    /// vouches for the baseline's counter when nothing finished since (`HubQuietCheck`), and
    /// when something did, the counter too; otherwise the counter with the snapshot, read in one
    /// statement. A role that may not call the snapshot's functions polls the counter alone
    /// from then on.
    package func poll(readingLoad: Bool, quiet: inout HubQuietCheck) throws(SettingsError) -> Poll {
        var transactions: Int64?
        var loadRead = false
        if let baseline = quiet.baseline {
            var look: HubQuietCheck.Look?
            var kind = HubQuietCheck.Kind.statement
            if !readingLoad, let unmoved = try callUnmoved(baseline.look, quiet: &quiet) {
                look = unmoved ? baseline.look : nil
                kind = .call
            } else {
                let numbering = quiet.asksFunction
                do {
                    let rows = try run(
                        "SELECT " + Self.lookColumns + (readingLoad ? ", " + Self.loadColumn : "")
                            + (numbering ? ", " + Self.functionColumn : ""),
                        namespaced: false)
                    if rows.count == 1 {
                        look = Self.look(in: rows, from: 0)
                        transactions =
                            readingLoad ? try Self.load(in: rows, column: 2, prepared: prepared) : nil
                        loadRead = readingLoad
                        if numbering, let look {
                            try number(&quiet, in: rows, column: readingLoad ? 3 : 2, under: look)
                        }
                    }
                } catch  where error.code == .accessDenied {
                    // Which function was refused, the counter's statement below finds out.
                }
            }
            if quiet.confirms(look) {
                return Poll(counter: baseline.counter, transactions: transactions, quietCheck: kind)
            }
        }
        // No baseline, or the snapshot moved since: the counter, with the look for the next
        // baseline (and the load, unless the quiet check read it).
        let withLoad = readingLoad && !loadRead
        var looking = quiet.looks
        if !looking { quiet.readWithoutLooking() }
        let numbering = looking && quiet.asksFunction
        let rows: PostgresRows
        do {
            rows = try run(
                counterStatement(looking: looking, readingLoad: withLoad, numbering: numbering),
                namespaced: true)
        } catch  where looking && error.code == .accessDenied {
            // The counter and the load without the snapshot: if that passes, the snapshot's
            // functions were the ones refused.
            rows = try run(counterStatement(looking: false, readingLoad: withLoad), namespaced: true)
            quiet.becomeUnavailable()
            looking = false
        }
        let read = try read(counterFrom: rows, readingLoad: withLoad)
        if looking, rows.count == 1 {
            let column = withLoad ? 2 : 1
            let look = Self.look(in: rows, from: column)
            quiet.record(look, counter: read.counter)
            if numbering, let look { try number(&quiet, in: rows, column: column + 2, under: look) }
        }
        return Poll(
            counter: read.counter, transactions: loadRead ? transactions : read.transactions,
            quietCheck: nil)
    }

    /// Whether this connection runs statements prepared (a direct one) or as simple queries.
    private var prepared: Bool { connection.preparesStatements }

    /// The counter's statement, with the load's column, the look's and the quiet-check
    /// function's number when asked.
    private func counterStatement(looking: Bool, readingLoad: Bool, numbering: Bool = false) -> String {
        (prepared ? "SELECT settingsd.counter($1)" : pollStatement)
            + (readingLoad ? ", " + Self.loadColumn : "") + (looking ? ", " + Self.lookColumns : "")
            + (looking && numbering ? ", " + Self.functionColumn : "")
    }

    /// A quiet check as a fast-path call (`HubSchema.quietCall`): whether the server's look is
    /// still `look`, or nil when the link has no function to call or the hub refused the call
    /// (the poll then reads the look with a statement). A broken or stalled connection throws.
    private func callUnmoved(_ look: HubQuietCheck.Look, quiet: inout HubQuietCheck) throws(SettingsError)
        -> Bool?
    {
        guard let function = quiet.callable else { return nil }
        do {
            let answer = try connection.callInteger(
                function, text: look.text, what: "settingsd.unmoved(text)")
            quiet.callAnswered()
            return answer == 1
        } catch  where error.code != .connectionLost && error.code != .timeout {
            quiet.callRefused(denied: error.code == .accessDenied)
            return nil
        }
    }

    /// Tells `quiet` the number of its function, read in `column` of a poll that saw `look`.
    private func number(
        _ quiet: inout HubQuietCheck, in rows: PostgresRows, column: Int, under look: HubQuietCheck.Look
    )
        throws(SettingsError)
    {
        quiet.numbered(
            try Self.number(in: rows, column: column, "the hub's quiet-check function", prepared: prepared),
            under: look)
    }

    /// The number of the quiet check's function: NULL on a hub without it (before schema 13), or
    /// where it does not return one `integer`, whose four bytes are all a fast-path call takes
    /// (libpq waits for more than a longer answer and would wait until the stall time-out).
    /// Asked once a connection and after a restart, so its lookup in the catalog costs little.
    private static let functionColumn = """
        (SELECT p.oid::pg_catalog.int8 FROM pg_catalog.pg_proc AS p \
        WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('settingsd.unmoved(text)') \
        AND p.prorettype OPERATOR(pg_catalog.=) 'pg_catalog.int4'::pg_catalog.regtype AND NOT p.proretset)
        """

    /// Runs one of the poll's statements: on a direct connection with the namespace as its
    /// parameter when it is `namespaced` (the counter's statement), as a simple query through a
    /// pooler, where the counter's statement carries the namespace in its text.
    private func run(_ sql: String, namespaced: Bool) throws(SettingsError) -> PostgresRows {
        guard prepared else { return try connection.query(sql) }
        return try connection.execute(sql, namespaced ? [.text(name)] : [])
    }

    /// The counter in column 0 and, when `readingLoad`, the load in column 1.
    private func read(counterFrom rows: PostgresRows, readingLoad: Bool) throws(SettingsError) -> (
        counter: Int64, transactions: Int64?
    ) {
        guard rows.count == 1 else { return (0, nil) }
        let what = "the hub's counter for '\(name)'"
        let transactions = readingLoad ? try Self.load(in: rows, column: 1, prepared: prepared) : nil
        guard let counter = try Self.number(in: rows, column: 0, what, prepared: prepared) else {
            return (0, transactions)
        }
        return (try Arrival.position(counter, what), transactions)
    }

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

    /// The load in `column`: nil when the statistics are off, or the count is negative.
    private static func load(in rows: PostgresRows, column: Int, prepared: Bool) throws(SettingsError)
        -> Int64?
    {
        let read = try number(
            in: rows, column: column, "the hub database's transaction count", prepared: prepared)
        return read.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The look in `column` and the next of the first row; nil when either is NULL or longer
    /// than a look is kept (measured before it is copied).
    private static func look(in rows: PostgresRows, from column: Int) -> HubQuietCheck.Look? {
        func text(_ column: Int) -> String? {
            guard !rows.isNull(0, column), rows.withBytes(0, column, \.count) <= HubQuietCheck.longestLook
            else { return nil }
            return rows.text(0, column)
        }
        return HubQuietCheck.Look(snapshot: text(column), started: text(column + 1))
    }

    /// The server's snapshot and start time, as text (`HubQuietCheck`).
    private static let lookColumns =
        "pg_catalog.txid_current_snapshot()::text, pg_catalog.pg_postmaster_start_time()::text"

    /// The hub database's transactions so far, committed and rolled back: what the server's
    /// statistics counted, a second or so behind. From the functions behind `pg_stat_database`
    /// rather than the view, whose expansion (two dozen columns over a `UNION ALL`) the server
    /// would parse and plan at every reading: that cost 283–333 µs of server CPU a statement
    /// against 150–213 µs (pgbench, 2,000 a second).
    private static let loadColumn =
        "(SELECT pg_catalog.pg_stat_get_db_xact_commit(d.oid) OPERATOR(pg_catalog.+) pg_catalog.pg_stat_get_db_xact_rollback(d.oid) FROM pg_catalog.pg_database AS d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())"
}
