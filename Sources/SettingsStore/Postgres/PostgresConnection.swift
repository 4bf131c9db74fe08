internal import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection that owns its `PGconn`: parameterised statements only, every result
/// checked in one place, errors that name the statement and never the password.
///
/// Blocking: used from one thread at a time (the hub link's own thread), so a slow hub never
/// stalls the daemon's event loop or local reads and writes.
final class PostgresConnection {
    private let connection: OpaquePointer
    private let pq: CSettingsLibPQ
    /// The connection string without its password, for messages.
    let displayName: String

    /// Connects with `conninfo` (a libpq connection string or `postgresql://` URI; every libpq
    /// option, TLS and `~/.pgpass` included). `defaults` apply only where `conninfo` is silent.
    init(conninfo: String, defaults: [String: String] = [:]) throws(SettingsError) {
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

    /// The socket, for waiting on notifications with `poll(2)`.
    var socket: Int32 { pq.socket(connection) }

    /// Runs one statement with its parameters (`$1`, `$2`, ...; values never enter the SQL text)
    /// and returns its rows, read in binary.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(SettingsError) -> PostgresRows {
        let encoded = parameters.map(\.encoded)
        let result = encoded.withParameterPointers { values, lengths, formats in
            pq.execParams(connection, sql, Int32(encoded.count), nil, values, lengths, formats, 1)
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

    /// Runs a script of statements without parameters (schema changes: no values in it).
    func executeScript(_ sql: String) throws(SettingsError) {
        guard let result = pq.exec(connection, sql) else { throw failure(sql: sql, result: nil) }
        defer { pq.clear(result) }
        switch pq.resultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK: return
        default: throw failure(sql: sql, result: result)
        }
    }

    /// Reads what arrived on the socket and returns the notification payloads received.
    func notifications() throws(SettingsError) -> [String] {
        guard pq.consumeInput(connection) == 1 else { throw failure(sql: nil, result: nil) }
        var payloads: [String] = []
        while let notify = pq.notifies(connection) {
            payloads.append(String(cString: notify.pointee.extra))
            pq.freemem(notify)
        }
        return payloads
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
