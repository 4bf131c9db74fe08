internal import CLibPQ

/// The rows of a statement, read in binary; owns its `PGresult`.
package final class PostgresRows {
    private let result: OpaquePointer
    private let pq: CSettingsLibPQ

    init(_ result: OpaquePointer, functions: CSettingsLibPQ) {
        self.result = result
        self.pq = functions
    }

    deinit {
        pq.clear(result)
    }

    /// How many rows there are.
    package var count: Int { Int(pq.ntuples(result)) }

    /// Whether the value is SQL NULL.
    package func isNull(_ row: Int, _ column: Int) -> Bool {
        pq.getisnull(result, Int32(row), Int32(column)) == 1
    }

    /// The raw bytes of a value (`bytea`, or text's UTF-8).
    package func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let length = Int(pq.getlength(result, Int32(row), Int32(column)))
        guard length > 0, let value = pq.getvalue(result, Int32(row), Int32(column)) else { return [] }
        return UnsafeRawBufferPointer(start: value, count: length).map { $0 }
    }

    /// A `text` (or `name`) value.
    package func text(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// A `bigint` value (binary: eight bytes, big-endian); a `integer` (four) is widened.
    package func int64(_ row: Int, _ column: Int) -> Int64 {
        let bytes = bytes(row, column)
        let unsigned = bytes.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        guard bytes.count == 4 else { return Int64(bitPattern: unsigned) }
        return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: unsigned)))
    }
}
