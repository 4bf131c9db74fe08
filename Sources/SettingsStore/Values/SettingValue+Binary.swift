#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The compact binary form values take in the database (see `docs/STORAGE.md`).
///
/// Every value is a tag byte followed by its payload; lengths and counts are LEB128 varints;
/// fixed-width numbers are little-endian. Decoding checks every length and bounds nesting.
extension SettingValue {
    enum Tag: UInt8 {
        case boolFalse = 0x01
        case boolTrue = 0x02
        case integer = 0x03
        case double = 0x04
        case string = 0x05
        case data = 0x06
        case date = 0x07
        case array = 0x08
        case dictionary = 0x09
    }

    /// The deepest nesting the binary format itself decodes (older files may hold values nested
    /// deeper than `maximumNestingDepth`; they still load, and can be overwritten or deleted).
    static let formatNestingDepth = 64

    /// The value's encoded form, as stored.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        append(to: &bytes)
        return bytes
    }

    /// The number of bytes the value takes in storage, counted against value-size limits.
    package var storageSize: Int {
        switch self {
        case .bool: 1
        case .integer, .double, .date: 9
        case .string(let text): 1 + Self.varintSize(text.utf8.count) + text.utf8.count
        case .data(let data): 1 + Self.varintSize(data.count) + data.count
        case .array(let values): values.reduce(1 + Self.varintSize(values.count)) { $0 + $1.storageSize }
        case .dictionary(let values):
            values.reduce(1 + Self.varintSize(values.count)) {
                $0 + Self.varintSize($1.key.utf8.count) + $1.key.utf8.count + $1.value.storageSize
            }
        }
    }

    private func append(to bytes: inout [UInt8]) {
        switch self {
        case .bool(let value):
            bytes.append(value ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .integer(let value):
            bytes.append(Tag.integer.rawValue)
            Self.appendFixed(UInt64(bitPattern: value), to: &bytes)
        case .double(let value):
            bytes.append(Tag.double.rawValue)
            Self.appendFixed(value.bitPattern, to: &bytes)
        case .date(let value):
            bytes.append(Tag.date.rawValue)
            Self.appendFixed(value.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .string(let text):
            bytes.append(Tag.string.rawValue)
            Self.appendVarint(text.utf8.count, to: &bytes)
            bytes.append(contentsOf: text.utf8)
        case .data(let data):
            bytes.append(Tag.data.rawValue)
            Self.appendVarint(data.count, to: &bytes)
            bytes.append(contentsOf: data)
        case .array(let values):
            bytes.append(Tag.array.rawValue)
            Self.appendVarint(values.count, to: &bytes)
            for value in values { value.append(to: &bytes) }
        case .dictionary(let values):
            bytes.append(Tag.dictionary.rawValue)
            Self.appendVarint(values.count, to: &bytes)
            // Sorted keys make the encoding canonical, so equal values always store equal bytes.
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                Self.appendVarint(key.utf8.count, to: &bytes)
                bytes.append(contentsOf: key.utf8)
                value.append(to: &bytes)
            }
        }
    }

    private static func appendFixed(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendVarint(_ value: Int, to bytes: inout [UInt8]) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static func varintSize(_ value: Int) -> Int {
        var size = 1
        var rest = value >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    /// Decodes a value stored by `encoded()`; throws `corruptDatabase` on any malformed input.
    package init(decoding bytes: UnsafeRawBufferPointer) throws(SettingsError) {
        var reader = BinaryReader(bytes: bytes)
        self = try reader.readValue(depth: 0)
        guard reader.isAtEnd else { throw reader.failure("trailing bytes after value") }
    }
}

/// A bounds-checked cursor over stored bytes.
private struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    func failure(_ reason: String) -> SettingsError {
        SettingsError(.corruptDatabase, "malformed stored value: \(reason) at byte \(offset)")
    }

    mutating func readByte() throws(SettingsError) -> UInt8 {
        guard offset < bytes.count else { throw failure("unexpected end") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readFixed() throws(SettingsError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw failure("unexpected end") }
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8]))
        }
        offset += 8
        return UInt64(littleEndian: value)
    }

    mutating func readLength() throws(SettingsError) -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 63 else { throw failure("length too long") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard value <= UInt64(bytes.count - offset) else { throw failure("length \(value) past the end") }
        return Int(value)
    }

    mutating func readSlice() throws(SettingsError) -> UnsafeRawBufferPointer {
        let count = try readLength()
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func readString() throws(SettingsError) -> String {
        let slice = try readSlice()
        guard let text = String(validating: slice.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw failure("invalid UTF-8")
        }
        return text
    }

    mutating func readValue(depth: Int) throws(SettingsError) -> SettingValue {
        let tagByte = try readByte()
        guard let tag = SettingValue.Tag(rawValue: tagByte) else { throw failure("unknown tag \(tagByte)") }
        switch tag {
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .integer: return .integer(Int64(bitPattern: try readFixed()))
        case .double: return .double(Double(bitPattern: try readFixed()))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed())))
        case .string: return .string(try readString())
        case .data: return .data(Data(try readSlice()))
        case .array, .dictionary:
            guard depth < SettingValue.formatNestingDepth else { throw failure("nested too deeply") }
            // Each element takes at least one byte, so a count past the remaining bytes is a lie.
            let count = try readLength()
            if tag == .array {
                var values: [SettingValue] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try readValue(depth: depth + 1)) }
                return .array(values)
            }
            var values: [String: SettingValue] = [:]
            values.reserveCapacity(count)
            for _ in 0..<count {
                let key = try readString()
                values[key] = try readValue(depth: depth + 1)
            }
            return .dictionary(values)
        }
    }
}
