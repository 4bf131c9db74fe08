internal import CLibPQ
import SettingsStore
import SettingsWire

/// The rows of a statement, read in binary (as text from `PostgresConnection.query`: read those
/// with `text(_:_:)`); owns its `PGresult`.
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
        withBytes(row, column) { [UInt8]($0) }
    }

    /// Calls `body` with the bytes of a value where libpq holds them (empty for NULL), valid
    /// only during the call: a row is read without a copy of each of its values.
    package func withBytes<Result>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) -> Result)
        -> Result
    {
        let length = Int(pq.getlength(result, Int32(row), Int32(column)))
        guard length > 0, let value = pq.getvalue(result, Int32(row), Int32(column)) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: value, count: length))
    }

    /// A `text` (or `name`) value.
    package func text(_ row: Int, _ column: Int) -> String {
        withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// A `bigint` value (binary: eight bytes, big-endian); a `integer` (four) is widened.
    package func int64(_ row: Int, _ column: Int) -> Int64 {
        withBytes(row, column) { bytes in
            switch bytes.count {
            case 8: return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
            case 4: return Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self)))
            default:
                let unsigned = bytes.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
                return Int64(bitPattern: unsigned)
            }
        }
    }
}
