internal import CLibPQ
package import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection that owns its `PGconn`: parameterised statements only, every result
/// checked in one place, errors that name the statement and never the password.
///
/// Blocking: used from one thread at a time (the hub link's own thread), so a slow hub never
/// stalls the daemon's event loop or local reads and writes.
package final class PostgresConnection {
    private let connection: OpaquePointer
    private let pq: CSettingsLibPQ
    /// The connection string without its password, for messages.
    package let displayName: String
    /// The longest a statement may go unanswered before the connection is called stalled
    /// (nil: wait as long as it takes). PostgreSQL's own `statement_timeout` cannot help when
    /// its backend is frozen or the network is gone silently; this is the client's bound.
    var stallTimeout: Duration? {
        didSet { _ = pq.setnonblocking(connection, stallTimeout == nil ? 0 : 1) }
    }
    /// The statements sent on this connection so far (scripts count one each).
    package private(set) var statementCount = 0
    /// Whether statements with parameters are prepared the first time they run and only
    /// executed after that, so PostgreSQL parses each once per connection. Not through a pooler
    /// in transaction pooling: the next transaction may run on a server connection that never
    /// saw the statement prepared.
    var preparesStatements = false
    /// The names of the statements prepared on this connection, by their text.
    private var prepared: [String: String] = [:]

    /// Connects with `conninfo` (a libpq connection string or `postgresql://` URI; every libpq
    /// option, TLS and `~/.pgpass` included). `defaults` apply only where `conninfo` is silent.
    package init(conninfo: String, defaults: [String: String] = [:]) throws(SettingsError) {
        let pq = try LibPQ.functions()
        displayName = PostgresConnectionString.redacted(conninfo)
        // Defaults first, the caller's string last: later keywords win in libpq.
        let pairs = defaults.sorted { $0.key < $1.key } + [("dbname", conninfo)]
        let connection = Self.withCStrings(pairs.map(\.0)) { keywords in
            Self.withCStrings(pairs.map(\.1)) { values in pq.connectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw SettingsError(.io, "cannot connect to the hub \(displayName): out of memory")
        }
        guard pq.status(connection) == CONNECTION_OK else {
            let message = Self.message(pq.errorMessage(connection))
            pq.finish(connection)
            throw SettingsError(.connectionLost, "cannot connect to the hub \(displayName): \(message)")
        }
        self.connection = connection
        self.pq = pq
    }

    deinit {
        pq.finish(connection)
    }

    /// Whether a connection pooler stands between this connection and PostgreSQL: the server
    /// process that answers is not the one the connection announced (a pooler announces its own
    /// cancellation key, PostgreSQL the process's id).
    func isPooled() throws(SettingsError) -> Bool {
        let rows = try execute("SELECT pg_catalog.pg_backend_pid()::bigint")
        return rows.count != 1 || rows.int64(0, 0) != Int64(pq.backendPID(connection))
    }

    /// The socket, for waiting on notifications with `poll(2)`.
    package var socket: Int32 { pq.socket(connection) }

    /// Runs one statement with its parameters (`$1`, `$2`, ...; values never enter the SQL text)
    /// and returns its rows, read in binary.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(SettingsError)
        -> PostgresRows
    {
        let encoded = parameters.map(\.encoded)
        let name =
            preparesStatements && !parameters.isEmpty
            ? try preparedName(of: sql, parameters: encoded.count) : nil
        statementCount += 1
        let result: OpaquePointer?
        if let stallTimeout {
            let sent = encoded.withParameterPointers { values, lengths, formats in
                if let name {
                    pq.sendQueryPrepared(connection, name, Int32(encoded.count), values, lengths, formats, 1)
                } else {
                    pq.sendQueryParams(
                        connection, sql, Int32(encoded.count), nil, values, lengths, formats, 1)
                }
            }
            guard sent == 1 else { throw failure(sql: sql, result: nil) }
            result = try awaitResult(sql: sql, deadline: .after(stallTimeout))
        } else {
            result = encoded.withParameterPointers { values, lengths, formats in
                if let name {
                    pq.execPrepared(connection, name, Int32(encoded.count), values, lengths, formats, 1)
                } else {
                    pq.execParams(connection, sql, Int32(encoded.count), nil, values, lengths, formats, 1)
                }
            }
        }
        guard let result else { throw failure(sql: sql, result: nil) }
        switch pq.resultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            return PostgresRows(result, functions: pq)
        default:
            defer { pq.clear(result) }
            throw failure(sql: sql, result: result)
        }
    }

    /// Runs one statement through the simple query protocol and returns its rows, as text: one
    /// message each way where `execute` sends five (parse, bind, describe, execute, sync) and
    /// PostgreSQL analyses each. For a statement that runs so often through a pooler that this
    /// counts (the poll of a fleet); any value in `sql` must be quoted by `quotedLiteral(_:)`.
    package func query(_ sql: String) throws(SettingsError) -> PostgresRows {
        statementCount += 1
        let result: OpaquePointer?
        if let stallTimeout {
            guard pq.sendQuery(connection, sql) == 1 else { throw failure(sql: sql, result: nil) }
            result = try awaitResult(sql: sql, deadline: .after(stallTimeout))
        } else {
            result = pq.exec(connection, sql)
        }
        guard let result else { throw failure(sql: sql, result: nil) }
        guard pq.resultStatus(result) == PGRES_TUPLES_OK else {
            defer { pq.clear(result) }
            throw failure(sql: sql, result: result)
        }
        return PostgresRows(result, functions: pq)
    }

    /// An argument of a fast-path call, sent in its binary form.
    enum FastPathArgument {
        /// A `text` or `name`: its UTF-8 bytes.
        case text(String)
        /// A `bigint`: eight bytes, most significant first.
        case int64(Int64)

        var bytes: [UInt8] {
            switch self {
            case .text(let text): Array(text.utf8)
            case .int64(let value): withUnsafeBytes(of: value.bigEndian) { Array($0) }
            }
        }
    }

    /// Calls the function numbered `function` (its `pg_proc` oid), which returns an `integer`,
    /// with `arguments` (at most four), through PostgreSQL's fast-path interface: one message
    /// naming the function, with nothing to parse or plan, where a statement that calls it costs
    /// the server about twice as much (see `HubPollCall`). Returns the result, nil for NULL.
    ///
    /// `what` names the function in errors. libpq's fast-path call has no time-out of its own:
    /// with `stallTimeout` set, a `StallAlarm` shuts the socket down when it runs out.
    func callInteger(_ function: UInt32, _ arguments: [FastPathArgument], what: String) throws(SettingsError)
        -> Int32?
    {
        statementCount += 1
        let description = "fast-path call of \(what)"
        let alarm = stallTimeout.map { StallAlarm(socket: socket, after: $0) }
        var value: Int32 = 0
        var length: Int32 = -1
        let encoded = arguments.map(\.bytes)
        let lengths = encoded.map { Int32($0.count) }
        // One byte more, so the buffer has an address even when every argument is empty.
        let packed = Array(encoded.joined()) + [0]
        let result = packed.withUnsafeBufferPointer { bytes -> OpaquePointer? in
            bytes.withMemoryRebound(to: CChar.self) { characters -> OpaquePointer? in
                guard let base = characters.baseAddress else { return nil }
                return withUnsafePointer(to: pq) { api in
                    csettings_libpq_call_integer(
                        api, connection, function, base, lengths, Int32(lengths.count), &value, &length)
                }
            }
        }
        if alarm?.disarm() == true {
            if let result { pq.clear(result) }
            throw stalled(sql: description)
        }
        guard let result else { throw failure(sql: description, result: nil) }
        defer { pq.clear(result) }
        guard pq.resultStatus(result) == PGRES_COMMAND_OK else {
            throw failure(sql: description, result: result)
        }
        switch length {
        case -1: return nil
        case 4: return value
        default:
            throw SettingsError(
                .protocolError, "hub \(displayName): \(what) answered with \(length) bytes, not an integer",
                sql: description)
        }
    }

    /// The name `sql` is prepared under on this connection, preparing it the first time.
    private func preparedName(of sql: String, parameters: Int) throws(SettingsError) -> String {
        if let name = prepared[sql] { return name }
        let name = "settingsd_\(prepared.count + 1)"
        let result: OpaquePointer?
        if let stallTimeout {
            guard pq.sendPrepare(connection, name, sql, Int32(parameters), nil) == 1 else {
                throw failure(sql: sql, result: nil)
            }
            result = try awaitResult(sql: sql, deadline: .after(stallTimeout))
        } else {
            result = pq.prepare(connection, name, sql, Int32(parameters), nil)
        }
        guard let result else { throw failure(sql: sql, result: nil) }
        defer { pq.clear(result) }
        guard pq.resultStatus(result) == PGRES_COMMAND_OK else { throw failure(sql: sql, result: result) }
        prepared[sql] = name
        return name
    }

    /// Sends what libpq still holds of a statement and reads its result, waiting on the socket
    /// no later than `deadline`; the last result of the statement.
    private func awaitResult(sql: String, deadline: Deadline) throws(SettingsError) -> OpaquePointer? {
        while true {
            let flushed = pq.flush(connection)
            if flushed == 0 { break }
            guard flushed == 1 else { throw failure(sql: sql, result: nil) }
            try wait(for: Int16(POLLIN | POLLOUT), until: deadline, sql: sql)
            guard pq.consumeInput(connection) == 1 else { throw failure(sql: sql, result: nil) }
        }
        var last: OpaquePointer?
        while true {
            while pq.isBusy(connection) == 1 {
                try wait(for: Int16(POLLIN), until: deadline, sql: sql)
                guard pq.consumeInput(connection) == 1 else {
                    if let last { pq.clear(last) }
                    throw failure(sql: sql, result: nil)
                }
            }
            guard let result = pq.getResult(connection) else { return last }
            if let last { pq.clear(last) }
            last = result
        }
    }

    /// Waits until the socket is ready for `events`, or throws `timeout` at `deadline`.
    private func wait(for events: Int16, until deadline: Deadline, sql: String) throws(SettingsError) {
        while true {
            guard !deadline.hasPassed else { throw stalled(sql: sql) }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, min(deadline.pollTimeout, 1_000))
            if ready > 0 || (ready < 0 && errno != EINTR) { return }
        }
    }

    /// The error of a statement or call that went unanswered for `stallTimeout`.
    private func stalled(sql: String) -> SettingsError {
        SettingsError(
            .timeout,
            "hub \(displayName): no answer in \((stallTimeout ?? .zero).seconds) s: the hub or its server process is stalled; reconnecting",
            sql: sql)
    }

    /// Runs a script of statements without parameters (schema changes: no values in it).
    func executeScript(_ sql: String) throws(SettingsError) {
        statementCount += 1
        guard let result = pq.exec(connection, sql) else { throw failure(sql: sql, result: nil) }
        defer { pq.clear(result) }
        switch pq.resultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK: return
        default: throw failure(sql: sql, result: result)
        }
    }

    /// Reads what arrived on the socket and returns the notification payloads received.
    package func notifications() throws(SettingsError) -> [String] {
        guard pq.consumeInput(connection) == 1 else { throw failure(sql: nil, result: nil) }
        var payloads: [String] = []
        while let notify = pq.notifies(connection) {
            payloads.append(String(cString: notify.pointee.extra))
            pq.freemem(notify)
        }
        return payloads
    }

    /// `text` quoted as an SQL string literal, as this connection's encoding and settings read it.
    package func quotedLiteral(_ text: String) throws(SettingsError) -> String {
        guard let quoted = pq.escapeLiteral(connection, text, text.utf8.count) else {
            throw failure(sql: nil, result: nil)
        }
        defer { pq.freemem(quoted) }
        return String(cString: quoted)
    }

    /// `name` quoted as an SQL identifier.
    func quotedIdentifier(_ name: String) throws(SettingsError) -> String {
        guard let quoted = pq.escapeIdentifier(connection, name, name.utf8.count) else {
            throw failure(sql: nil, result: nil)
        }
        defer { pq.freemem(quoted) }
        return String(cString: quoted)
    }

    /// The error of a failed statement (or of the connection), with its SQLSTATE when known.
    private func failure(sql: String?, result: OpaquePointer?) -> SettingsError {
        let message = Self.message(result.map { pq.resultErrorMessage($0) } ?? pq.errorMessage(connection))
        let state = result.flatMap { pq.resultErrorField($0, Int32(UInt8(ascii: "C"))) }.map {
            String(cString: $0)
        }
        let broken = pq.status(connection) != CONNECTION_OK
        let code: SettingsError.Code =
            switch state {
            case "42501": .accessDenied  // insufficient privilege, row-level security included
            case _ where broken: .connectionLost
            default: .io
            }
        let detail = state.map { " [SQLSTATE \($0)]" } ?? ""
        return SettingsError(code, "hub \(displayName): \(message)\(detail)", sql: sql)
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).split(separator: "\n").first.map(String.init) ?? "unknown error"
    }

    private static func withCStrings<Result>(
        _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let duplicates = strings.map { strdup($0) }
        defer { duplicates.forEach { free($0) } }
        let pointers = duplicates.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { buffer in
            // Never empty: it holds `count + 1` pointers, the last nil, as libpq's arrays end.
            guard let base = buffer.baseAddress else { preconditionFailure("an empty keyword array") }
            return body(base)
        }
    }
}
