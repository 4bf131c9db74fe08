/// A strict RFC 8259 JSON parser over UTF-8 bytes, bounded in nesting, with errors that say where.
package enum JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    package static let maximumDepth = 64

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(SettingsError) -> JSONValue {
        try validateUTF8(bytes)
        var parser = JSONCursor(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        try parser.expectEnd()
        return value
    }

    /// Parses a text that must hold an object into `members`, without building the dictionary a
    /// `JSONValue.object` needs (a request is a handful of small members; a response keeps its
    /// envelope apart).
    ///
    /// - Throws: `protocolError` for malformed JSON, or valid JSON that is not an object
    ///   ("`what` must be a JSON object").
    static func parseObject(
        _ bytes: UnsafeRawBufferPointer, what: String, into members: inout some JSONMemberSink
    ) throws(SettingsError) {
        try validateUTF8(bytes)
        var parser = JSONCursor(bytes: bytes)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else {
            let value = try parser.value(depth: 0)
            try parser.expectEnd()
            throw SettingsError(.protocolError, "\(what) must be a JSON object, not \(value.typeName)")
        }
        try parser.object(depth: 1, into: &members)
        try parser.expectEnd()
    }

    /// `parseObject(_:what:into:)` for a frame as a framer hands it out.
    package static func parseObject(
        _ frame: ArraySlice<UInt8>, what: String, into members: inout some JSONMemberSink
    ) throws(SettingsError) {
        try frame.withUnsafeBytes { bytes in
            Result { () throws(SettingsError) in try parseObject(bytes, what: what, into: &members) }
        }.get()
    }

    /// Refuses text that is not UTF-8; ASCII, the common case, is checked without building a `String`.
    private static func validateUTF8(_ bytes: UnsafeRawBufferPointer) throws(SettingsError) {
        if bytes.isASCII { return }
        guard String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
            throw SettingsError(.protocolError, "malformed JSON: not valid UTF-8")
        }
    }
}

extension JSONValue {
    /// Parses a JSON text (RFC 8259; nesting at most 64 levels).
    ///
    /// - Throws: `SettingsError` with code `protocolError` saying what is wrong and where.
    package static func parse(_ text: some Collection<UInt8>) throws(SettingsError) -> JSONValue {
        let result = text.withContiguousStorageIfAvailable { buffer -> Result<JSONValue, SettingsError> in
            do throws(SettingsError) {
                return .success(try JSONParser.parse(UnsafeRawBufferPointer(buffer)))
            } catch {
                return .failure(error)
            }
        }
        if let result { return try result.get() }
        return try parse(Array(text))
    }

    /// Parses a JSON text given as a string.
    package static func parse(_ text: String) throws(SettingsError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

/// Reads JSON text byte by byte; objects go to a `JSONMemberSink` so a caller chooses their storage.
package struct JSONCursor {
    let bytes: UnsafeRawBufferPointer
    package var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    package func failure(_ reason: String) -> SettingsError {
        SettingsError(.protocolError, "malformed JSON: \(reason) at byte \(offset)")
    }

    package func peek() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    @inline(__always)
    package mutating func skipWhitespace() {
        // Compact JSON, the common case, has none: a byte above the space is not whitespace.
        guard offset < bytes.count, bytes[offset] <= 0x20 else { return }
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    mutating func expect(_ literal: StaticString, _ value: JSONValue) throws(SettingsError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            guard bytes.count - offset >= count else { return false }
            for index in 0..<count where bytes[offset + index] != expected[index] { return false }
            return true
        }
        guard matches else { throw failure("unexpected character") }
        offset += count
        return value
    }

    mutating func value(depth: Int) throws(SettingsError) -> JSONValue {
        guard let byte = peek() else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    mutating func expectEnd() throws(SettingsError) {
        skipWhitespace()
        guard isAtEnd else { throw failure("unexpected text after the JSON value") }
    }

    mutating func object(depth: Int) throws(SettingsError) -> JSONValue {
        // Small objects are the common case: reserving a few slots avoids regrowing the table.
        var members = [String: JSONValue](minimumCapacity: 8)
        try object(depth: depth, into: &members)
        return .object(members)
    }

    /// Reads an object at the cursor (its `{`) into `members`, refusing a repeated name.
    package mutating func object(depth: Int, into members: inout some JSONMemberSink) throws(SettingsError) {
        guard depth <= JSONParser.maximumDepth else {
            throw failure("nested deeper than \(JSONParser.maximumDepth)")
        }
        offset += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try string()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected ':'") }
            offset += 1
            skipWhitespace()
            let keyOffset = offset
            // A sink that reads the value itself refuses a repeated name itself.
            let wasRead = try members.readMember(named: key, from: &self, depth: depth)
            if !wasRead, !members.insert(try value(depth: depth), forName: key) {
                offset = keyOffset
                throw failure("duplicate key '\(key.debugDescriptionTruncated)'")
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(SettingsError) -> JSONValue {
        guard depth <= JSONParser.maximumDepth else {
            throw failure("nested deeper than \(JSONParser.maximumDepth)")
        }
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    mutating func string() throws(SettingsError) -> String {
        offset += 1
        let start = offset
        // Fast path: no escapes, so the bytes are the string (UTF-8 was validated up front).
        offset = bytes.firstJSONSpecial(from: offset, includingDelete: false)
        guard let stop = peek() else { throw failure("unterminated string") }
        guard stop >= 0x20 else { throw failure("control character in string") }
        if stop == UInt8(ascii: "\"") {
            defer { offset += 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        }
        // Slow path: build the bytes, decoding escapes into UTF-8.
        var buffer = Array(bytes[start..<offset])
        while true {
            guard let byte = peek() else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                offset += 1
                UTF8.encode(try escape()) { buffer.append($0) }
            case 0..<0x20:
                throw failure("control character in string")
            default:
                buffer.append(byte)
                offset += 1
            }
        }
    }

    mutating func escape() throws(SettingsError) -> Unicode.Scalar {
        guard let byte = peek() else { throw failure("unterminated escape") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4()
            if (0xD800..<0xDC00).contains(unit) {
                guard peek() == UInt8(ascii: "\\") else { throw failure("unpaired surrogate") }
                offset += 1
                guard peek() == UInt8(ascii: "u") else { throw failure("unpaired surrogate") }
                offset += 1
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate") }
                let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw failure("invalid escape") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("unpaired surrogate") }
            return scalar
        default:
            throw failure("invalid escape")
        }
    }

    mutating func hex4() throws(SettingsError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("bad hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    mutating func number() throws(SettingsError) -> JSONValue {
        let start = offset
        var isInteger = true
        if peek() == UInt8(ascii: "-") { offset += 1 }
        guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw failure("expected a digit")
        }
        if first == UInt8(ascii: "0") {
            offset += 1
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard skipDigits() > 0 else { throw failure("expected a digit after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
            guard skipDigits() > 0 else { throw failure("expected a digit in the exponent") }
        }
        // Up to 18 digits cannot overflow: read them without a String (ids, versions, times).
        if isInteger, offset - start <= 18 {
            let isNegative = bytes[start] == UInt8(ascii: "-")
            var magnitude: Int64 = 0
            for byte in bytes[(isNegative ? start + 1 : start)..<offset] {
                magnitude = magnitude &* 10 &+ Int64(byte &- UInt8(ascii: "0"))
            }
            return .integer(isNegative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger {
            guard let value = Int64(text) else {
                throw failure("integer \(text) is outside the 64-bit range")
            }
            return .integer(value)
        }
        guard let value = Double(text), value.isFinite else {
            throw failure("number \(text) is out of range")
        }
        return .double(value)
    }

    @discardableResult
    mutating func skipDigits() -> Int {
        let start = offset
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }
}
