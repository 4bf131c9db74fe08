internal import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The one place where SQLite result codes become `SettingsError`s.
enum SQLiteResult {
    /// Throws unless `code` is one of `accepted`, with SQLite's message, the SQL and the path.
    static func check(
        _ code: Int32,
        _ db: OpaquePointer?,
        sql: String? = nil,
        path: String,
        accepting accepted: Int32 = SQLITE_OK
    ) throws(SettingsError) {
        guard code != accepted, code != SQLITE_OK else { return }
        throw error(code, db, sql: sql, path: path)
    }

    static func error(_ code: Int32, _ db: OpaquePointer?, sql: String?, path: String) -> SettingsError {
        let detail =
            db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        let primary = code & 0xFF
        let kind: SettingsError.Code =
            switch primary {
            case SQLITE_CORRUPT, SQLITE_NOTADB: .corruptDatabase
            case SQLITE_READONLY, SQLITE_PERM: .readOnly
            case SQLITE_FULL: .diskFull
            case SQLITE_IOERR, SQLITE_CANTOPEN: .io
            default: .sqlite
            }
        let prefix =
            switch kind {
            case .corruptDatabase: "'\(path)' is not a usable settings database"
            case .readOnly: "'\(path)' cannot be written"
            case .diskFull: "disk full while writing '\(path)'"
            case .io: "cannot access '\(path)'"
            default: "SQLite error on '\(path)'"
            }
        // For a failed system call, what the system said (a lock refused, a descriptor limit).
        let system = kind == .io ? db.map { sqlite3_system_errno($0) }.flatMap { $0 > 0 ? $0 : nil } : nil
        let cause = system.map { ", \(String(cString: strerror($0))) (errno \($0))" } ?? ""
        return SettingsError(kind, "\(prefix): \(detail) (code \(code)\(cause))", path: path, sql: sql)
    }
}
