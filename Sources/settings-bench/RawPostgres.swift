import CLibPQ
import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// The floor for hub pushes: batches of 1,000 parameterised `INSERT … ON CONFLICT DO UPDATE`
/// rows on one libpq connection into a plain table (no counter, no row-level security).
final class RawPostgres {
    private let connection: OpaquePointer
    private let pq: CSettingsLibPQ

    init(conninfo: String) throws {
        let pq = try LibPQ.functions()
        self.pq = pq
        guard let connection = pq.connectdb(conninfo), pq.status(connection) == CONNECTION_OK else {
            throw SettingsError(.connectionLost, "raw libpq: cannot connect")
        }
        self.connection = connection
        try run("DROP TABLE IF EXISTS bench_kv")
        try run("CREATE TABLE bench_kv (key text PRIMARY KEY, value bytea)")
    }

    deinit {
        pq.finish(connection)
    }

    /// Seconds to upsert `count` rows of a 9-byte value (what an integer setting stores).
    func upsertSeconds(count: Int) throws -> Double {
        try measureSeconds {
            for chunk in stride(from: 0, to: count, by: 1_000) {
                let rows = Array(chunk..<min(chunk + 1_000, count))
                let placeholders = rows.indices.map { "($\($0 * 2 + 1)::text, $\($0 * 2 + 2)::bytea)" }
                let sql =
                    "INSERT INTO bench_kv (key, value) VALUES \(placeholders.joined(separator: ", ")) "
                    + "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                var values: [[UInt8]] = []
                var formats: [Int32] = []
                for row in rows {
                    values.append(Array("hub.key.\(row)".utf8) + [0])
                    formats.append(0)
                    values.append([3] + withUnsafeBytes(of: Int64(row).littleEndian) { Array($0) })
                    formats.append(1)
                }
                try run(sql, values: values, formats: formats)
            }
        }
    }

    /// Seconds `sql` takes, once.
    func seconds(of sql: String) throws -> Double {
        try measureSeconds { try run(sql) }
    }

    /// Runs `sql` (no parameters, no rows wanted).
    func execute(_ sql: String) throws {
        try run(sql)
    }

    private func run(_ sql: String, values: [[UInt8]] = [], formats: [Int32] = []) throws {
        let pointers = values.map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            return pointer
        }
        defer { pointers.forEach { $0.deallocate() } }
        let lengths = values.map { Int32($0.count) }
        let parameters: [UnsafePointer<CChar>?] = pointers.map { UnsafePointer($0) }
        let result = pq.execParams(connection, sql, Int32(values.count), nil, parameters, lengths, formats, 0)
        defer { pq.clear(result) }
        let status = pq.resultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw SettingsError(
                .io,
                "raw libpq: \(pq.errorMessage(connection).map { String(cString: $0) } ?? "unknown error")")
        }
    }
}
