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
    /// The connection string without its password, for messages.
    let displayName: String

    /// Connects with `conninfo` (a libpq connection string or `postgresql://` URI; every libpq
    /// option, TLS and `~/.pgpass` included). `defaults` apply only where `conninfo` is silent.
    init(conninfo: String, defaults: [String: String] = [:]) throws(SettingsError) {
        displayName = PostgresConnectionString.redacted(conninfo)
        // Defaults first, the caller's string last: later keywords win in libpq.
        let pairs = defaults.sorted { $0.key < $1.key } + [("dbname", conninfo)]
        let connection = Self.withCStrings(pairs.map(\.0)) { keywords in
            Self.withCStrings(pairs.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw SettingsError(.io, "cannot connect to the hub \(displayName): out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw SettingsError(.connectionLost, "cannot connect to the hub \(displayName): \(message)")
        }
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    /// The socket, for waiting on notifications with `poll(2)`.
    var socket: Int32 { PQsocket(connection) }

    /// Runs one statement with its parameters (`$1`, `$2`, ...; values never enter the SQL text)
    /// and returns its rows, read in binary.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(SettingsError) -> PostgresRows {
        let encoded = parameters.map(\.encoded)
        let result = encoded.withParameterPointers { values, lengths, formats in
            PQexecParams(connection, sql, Int32(encoded.count), nil, values, lengths, formats, 1)
        }
        guard let result else { throw failure(sql: sql, result: nil) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            return PostgresRows(result)
        default:
            defer { PQclear(result) }
            throw failure(sql: sql, result: result)
        }
    }

    /// Runs a script of statements without parameters (schema changes: no values in it).
    func executeScript(_ sql: String) throws(SettingsError) {
        guard let result = PQexec(connection, sql) else { throw failure(sql: sql, result: nil) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK: return
        default: throw failure(sql: sql, result: result)
        }
    }

    /// Reads what arrived on the socket and returns the notification payloads received.
    func notifications() throws(SettingsError) -> [String] {
        guard PQconsumeInput(connection) == 1 else { throw failure(sql: nil, result: nil) }
        var payloads: [String] = []
        while let notify = PQnotifies(connection) {
            payloads.append(String(cString: notify.pointee.extra))
            PQfreemem(notify)
        }
        return payloads
    }

    /// `name` quoted as an SQL identifier.
    func quotedIdentifier(_ name: String) throws(SettingsError) -> String {
        guard let quoted = PQescapeIdentifier(connection, name, name.utf8.count) else {
            throw failure(sql: nil, result: nil)
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// The error of a failed statement (or of the connection), with its SQLSTATE when known.
    private func failure(sql: String?, result: OpaquePointer?) -> SettingsError {
        let message = Self.message(result.map { PQresultErrorMessage($0) } ?? PQerrorMessage(connection))
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map {
            String(cString: $0)
        }
        let broken = PQstatus(connection) != CONNECTION_OK
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
