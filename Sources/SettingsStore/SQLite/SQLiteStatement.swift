internal import CSQLite

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A prepared statement that owns its `sqlite3_stmt` and finalizes it on deinit.
///
/// Bind parameters are 1-based, columns 0-based, as in SQLite. Not thread-safe: it belongs to
/// the connection that prepared it, which is guarded by its owner.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private let db: OpaquePointer
    let sql: String
    private let path: String
    private let arena = BindArena()

    package init(db: OpaquePointer, sql: String, path: String) throws(SettingsError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        try SQLiteResult.check(code, db, sql: sql, path: path)
        guard let statement else {
            throw SettingsError(.sqlite, "empty SQL statement on '\(path)'", path: path, sql: sql)
        }
        self.handle = statement
        self.db = db
        self.sql = sql
        self.path = path
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func bind(_ value: Int64, at index: Int32) throws(SettingsError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds text; the bytes are kept in the statement's arena until `reset()`, not copied by SQLite.
    package func bind(_ value: String, at index: Int32) throws(SettingsError) {
        let bytes = arena.copy(value.utf8)
        // An empty copy still points into the arena; text with a nil pointer would bind NULL.
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
        try check(
            sqlite3_bind_text(
                handle, index, base?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil))
    }

    /// Binds a blob; the bytes are kept in the statement's arena until `reset()`, not copied by SQLite.
    func bind(_ bytes: [UInt8], at index: Int32) throws(SettingsError) {
        let copy = arena.copy(bytes)
        // A zero-length blob must still be a blob, not NULL, so never pass a nil pointer.
        let base = copy.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
        try check(sqlite3_bind_blob(handle, index, base, Int32(copy.count), nil))
    }

    package func bindNull(at index: Int32) throws(SettingsError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Advances to the next row; returns false when the statement is done.
    package func step() throws(SettingsError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw SQLiteResult.error(code, db, sql: sql, path: path)
        }
    }

    /// Runs a statement that returns no rows, then makes it ready for reuse.
    package func run() throws(SettingsError) {
        defer { reset() }
        while try step() {}
    }

    /// Makes the statement ready to run again and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        arena.reset()
    }

    /// Runs a statement whose every parameter the caller binds before each run (a statement of
    /// many rows, whose hundreds of bindings would otherwise be cleared one by one each time),
    /// then makes it ready for reuse. Text and blobs bound earlier point into freed memory
    /// until bound again, so a parameter left unbound would read garbage: bind them all.
    func runBindingEveryParameter() throws(SettingsError) {
        defer {
            sqlite3_reset(handle)
            arena.reset()
        }
        while try step() {}
    }

    package func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    package func string(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Calls `body` with the column's bytes, valid only during the call (no copy is made).
    func withBytes<R, E: Error>(at column: Int32, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E)
        -> R
    {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    func bytes(at column: Int32) -> [UInt8] {
        withBytes(at: column) { Array($0) }
    }

    private func check(_ code: Int32) throws(SettingsError) {
        try SQLiteResult.check(code, db, sql: sql, path: path)
    }
}
