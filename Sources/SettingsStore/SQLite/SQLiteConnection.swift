internal import CSQLite

/// An open SQLite database connection that owns its `sqlite3` handle and closes it on deinit.
///
/// Not thread-safe by itself: exactly one owner (a mutex-guarded writer) uses it at a time.
package final class SQLiteConnection {
    private let handle: OpaquePointer
    /// The file this connection opened, for error messages.
    let path: String

    /// How a connection opens its file.
    package enum Access {
        /// Read and write, creating the file if needed.
        case readWrite
        /// Read only; WAL files may still be created beside it, where the folder allows.
        case readOnly
        /// Read only, assuming nobody changes the file meanwhile: no WAL or shared-memory file is
        /// touched, so a reader who cannot write the folder can still read a WAL database.
        case immutable
    }

    /// Opens (creating if needed) the database at `path`, or an in-memory database for `":memory:"`.
    package init(path: String, access: Access = .readWrite, busyTimeoutMilliseconds: Int32 = 5_000)
        throws(SettingsError)
    {
        var db: OpaquePointer?
        let mode =
            switch access {
            case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            case .readOnly: SQLITE_OPEN_READONLY
            case .immutable: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            }
        let flags = mode | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let name = access == .immutable ? Self.immutableURI(path) : path
        let code = sqlite3_open_v2(name, &db, flags, nil)
        guard let db else {
            throw SettingsError(.io, "cannot open '\(path)': out of memory", path: path)
        }
        guard code == SQLITE_OK else {
            let error = SQLiteResult.error(code, db, sql: nil, path: path)
            sqlite3_close_v2(db)
            throw error
        }
        self.handle = db
        self.path = path
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    /// A `file:` URI for `path` with `immutable=1`, escaping what URIs give meaning to.
    private static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "file:\(escaped)?immutable=1"
    }

    deinit {
        // close_v2 defers the close until every statement of this connection is finalized.
        sqlite3_close_v2(handle)
    }

    /// What SQLite calls after every commit: the hook's context, the connection, the database's
    /// name and the log's size in pages.
    typealias WALHook =
        @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32)
        -> Int32

    /// Installs `hook` (nil: none), which replaces SQLite's automatic checkpoints (`WALCheckpointer`).
    func setWALHook(context: UnsafeMutableRawPointer?, _ hook: WALHook?) {
        sqlite3_wal_hook(handle, hook, context)
    }

    /// Copies what the log holds into the database file, as far as no reader needs it, without
    /// waiting for the writer (`PRAGMA wal_checkpoint(PASSIVE)`); false when SQLite refused.
    @discardableResult
    func checkpointPassively() -> Bool {
        sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK
    }

    /// Compiles `sql` once for repeated use.
    package func prepare(_ sql: String) throws(SettingsError) -> SQLiteStatement {
        try SQLiteStatement(db: handle, sql: sql, path: path)
    }

    /// How many rows a statement that writes many at once takes: each statement costs SQLite a
    /// step and a reset, which with one row each was a fifth of writing 100,000 new keys.
    static let rowsPerStatement = 64

    /// The `VALUES` list of a statement writing `rows` rows of `columns` parameters each
    /// (`(?, ?), (?, ?)`): row `r`'s parameters are numbered from `r * columns + 1`.
    static func valuesList(columns: Int, rows: Int = rowsPerStatement) -> String {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Writes `count` rows in order: `rowsPerStatement` at a time through `many` (made with
    /// `valuesList(columns:)`), the rest one at a time through `one`. `bind(row, statement,
    /// base)` binds row `row`'s `columns` values to `statement` from parameter `base + 1`.
    static func write(
        rows count: Int, columns: Int, many: SQLiteStatement, one: SQLiteStatement,
        bind: (_ row: Int, _ statement: SQLiteStatement, _ base: Int32) throws(SettingsError) -> Void
    ) throws(SettingsError) {
        var row = 0
        while count - row >= rowsPerStatement {
            for offset in 0..<rowsPerStatement { try bind(row + offset, many, Int32(offset * columns)) }
            try many.runBindingEveryParameter()
            row += rowsPerStatement
        }
        while row < count {
            try bind(row, one, 0)
            try one.run()
            row += 1
        }
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SettingsError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        try SQLiteResult.check(code, handle, sql: sql, path: path)
    }

    /// Runs `sql` and returns the first column of its first row as an integer, or nil without rows.
    package func scalar(_ sql: String) throws(SettingsError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(at: 0) ? nil : statement.int64(at: 0)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws.
    package func transaction<R>(_ body: () throws(SettingsError) -> R) throws(SettingsError) -> R {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                try? execute("ROLLBACK")  // The original error is the one worth reporting.
            }
            throw error
        }
    }

    /// Whether the connection is inside an open transaction.
    var isInTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }
}
