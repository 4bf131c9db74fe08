import SettingsStore
import SettingsWire

/// A batch of hub rows packed into one value by `settingsd.pack_batch` (hub schema 11), which
/// machines at the same cursor share (`HubSchema.sharedBatches`).
///
/// Each row, integers big-endian, back to back:
///
/// | bytes | what |
/// | --- | --- |
/// | 8 | hub sequence number |
/// | 8 | the version's stamp |
/// | 1 | flags: 1 oversize (no key, no value follow), 2 tombstone (no value follows), 4 pushed by its writer (no pusher follows) |
/// | 4 + n | the writer's replica id |
/// | 4 + n | the pusher's replica id, unless flag 4 |
/// | 4 + n | the key, UTF-8, unless flag 1 |
/// | 4 + n | the value's binary encoding, unless flag 1 or 2 |
///
/// The bytes come from the hub, so they are hostile: every length is checked against what is
/// left before anything is read or allocated, and a batch that does not end exactly at a row's
/// end is refused whole.
struct PackedBatch {
    /// One row, its byte fields pointing into the batch (valid inside `forEach` only).
    struct Row {
        var sequence: Int64
        var stamp: Int64
        var isOversize: Bool
        var writer: UnsafeRawBufferPointer
        var pusher: UnsafeRawBufferPointer
        /// nil when oversize.
        var key: UnsafeRawBufferPointer?
        /// nil when oversize or a tombstone.
        var value: UnsafeRawBufferPointer?
    }

    /// Why a batch was refused, with the byte offset where reading stopped.
    struct Malformed: Error, Equatable {
        var offset: Int
        var reason: String
    }

    private static let oversize: UInt8 = 1
    private static let tombstone: UInt8 = 2
    private static let pushedByWriter: UInt8 = 4

    /// Calls `body` with each row of `bytes`, in order; throws, having called it for the rows
    /// before, at the first byte that does not fit the layout.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (Row) -> Void) throws(Malformed) {
        var reader = Reader(bytes: bytes)
        while !reader.isAtEnd {
            let sequence = try reader.int64("sequence number")
            let stamp = try reader.int64("stamp")
            let flags = try reader.byte("flags")
            guard flags & ~(oversize | tombstone | pushedByWriter) == 0 else {
                throw Malformed(offset: reader.offset - 1, reason: "unknown flags \(flags)")
            }
            let writer = try reader.field("writer")
            let pusher = flags & pushedByWriter != 0 ? writer : try reader.field("pusher")
            var key: UnsafeRawBufferPointer?
            var value: UnsafeRawBufferPointer?
            if flags & oversize == 0 {
                key = try reader.field("key")
                if flags & tombstone == 0 { value = try reader.field("value") }
            }
            body(
                Row(
                    sequence: sequence, stamp: stamp, isOversize: flags & oversize != 0, writer: writer,
                    pusher: pusher, key: key, value: value))
        }
    }

    /// Reads the layout's fields off the front of the bytes, checking each length first.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte(_ name: String) throws(Malformed) -> UInt8 {
            guard bytes.count - offset >= 1 else { throw truncated(name, needing: 1) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func int64(_ name: String) throws(Malformed) -> Int64 {
            guard bytes.count - offset >= 8 else { throw truncated(name, needing: 8) }
            var value: UInt64 = 0
            for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
            offset += 8
            return Int64(bitPattern: value)
        }

        /// A 4-byte length, then that many bytes.
        mutating func field(_ name: String) throws(Malformed) -> UnsafeRawBufferPointer {
            guard bytes.count - offset >= 4 else { throw truncated("\(name)'s length", needing: 4) }
            var length = 0
            for index in offset..<(offset + 4) { length = length << 8 | Int(bytes[index]) }
            guard length <= bytes.count - offset - 4 else {
                throw Malformed(
                    offset: offset,
                    reason: "the \(name) claims \(length) bytes, \(bytes.count - offset - 4) are left")
            }
            offset += 4
            defer { offset += length }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
        }

        private func truncated(_ name: String, needing count: Int) -> Malformed {
            Malformed(
                offset: offset, reason: "the \(name) needs \(count) bytes, \(bytes.count - offset) are left")
        }
    }
}
