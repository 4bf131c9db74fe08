import SettingsStore
import SettingsWire

/// A statement parameter, sent in PostgreSQL's binary format.
package enum PostgresValue {
    /// SQL NULL.
    case null
    /// `text`.
    case text(String)
    /// `bigint`.
    case int64(Int64)
    /// `bytea`.
    case bytes([UInt8])
    /// `text[]`: a whole batch in one parameter.
    case textArray([String])
    /// `bigint[]`.
    case int64Array([Int64])
    /// `bytea[]`; nil elements are NULL.
    case bytesArray([[UInt8]?])

    /// The bytes libpq sends (nil for NULL) and whether they are binary.
    var encoded: (bytes: [UInt8]?, isBinary: Bool) {
        switch self {
        case .null: (nil, false)
        case .text(let text): (Array(text.utf8), false)
        case .int64(let value): (withUnsafeBytes(of: value.bigEndian) { Array($0) }, true)
        case .bytes(let bytes): (bytes, true)
        case .textArray(let texts): (Self.array(of: 25, texts.map { Array($0.utf8) }), true)
        case .int64Array(let values):
            (
                Self.array(
                    of: 20, values.map { value in withUnsafeBytes(of: value.bigEndian) { Array($0) } }), true
            )
        case .bytesArray(let values): (Self.array(of: 17, values), true)
        }
    }

    /// A one-dimensional array in PostgreSQL's binary format: dimensions, flags and element type,
    /// then each element's length (-1: NULL) and bytes, all big-endian.
    private static func array(of elementType: UInt32, _ elements: [[UInt8]?]) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ word: Int32) { withUnsafeBytes(of: word.bigEndian) { bytes += $0 } }
        append(1)
        append(elements.contains { $0 == nil } ? 1 : 0)
        append(Int32(bitPattern: elementType))
        append(Int32(elements.count))
        append(1)
        for element in elements {
            guard let element else {
                append(-1)
                continue
            }
            append(Int32(element.count))
            bytes += element
        }
        return bytes
    }
}

extension Array where Element == (bytes: [UInt8]?, isBinary: Bool) {
    /// Calls `body` with libpq's parallel arrays of values, lengths and formats, valid during the call.
    func withParameterPointers<Result>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) ->
            Result
    ) -> Result {
        // One buffer holds every value; each parameter points into it (a NUL after text values).
        var storage: [UInt8] = []
        var offsets: [Int?] = []
        for (bytes, _) in self {
            guard let bytes else {
                offsets.append(nil)
                continue
            }
            offsets.append(storage.count)
            storage += bytes
            storage.append(0)
        }
        let lengths = map { Int32($0.bytes?.count ?? 0) }
        let formats = map { Int32($0.isBinary ? 1 : 0) }
        return storage.withUnsafeBufferPointer { buffer in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                guard let offset, let base = buffer.baseAddress else { return nil }
                return UnsafeRawPointer(base + offset).assumingMemoryBound(to: CChar.self)
            }
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
