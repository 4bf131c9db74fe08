extension JSONValue {
    /// The JSON text, keys sorted so equal values always print the same; one line unless `pretty`.
    package func serialized(pretty: Bool = false) -> String {
        var bytes: [UInt8] = []
        write(to: &bytes, pretty: pretty, indent: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The length of the compact JSON text, in bytes.
    package var serializedSize: Int {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return bytes.count
    }

    /// Appends the compact JSON text to `bytes`.
    package func write(to bytes: inout [UInt8]) {
        write(to: &bytes, pretty: false, indent: 0)
    }

    private func write(to bytes: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): Self.write(integer: value, to: &bytes)
        case .double(let value): bytes.append(contentsOf: Self.text(of: value).utf8)
        case .string(let value): Self.write(string: value, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(&bytes, indent: indent + 1) }
                element.write(to: &bytes, pretty: pretty, indent: indent + 1)
            }
            if pretty && !elements.isEmpty { Self.newline(&bytes, indent: indent) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            // Sorted by UTF-8 bytes: as deterministic as String order, without its Unicode work.
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, (key, value)) in sorted.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(&bytes, indent: indent + 1) }
                Self.write(string: key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                value.write(to: &bytes, pretty: pretty, indent: indent + 1)
            }
            if pretty && !members.isEmpty { Self.newline(&bytes, indent: indent) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// A double's shortest round-tripping text, always with a `.` or exponent so it reads back
    /// as a double; non-finite values (which JSON cannot hold) become `null`.
    static func text(of value: Double) -> String {
        guard value.isFinite else { return "null" }
        let text = String(value)
        return text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0"
    }

    private static func newline(_ bytes: inout [UInt8], indent: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Decimal digits without the `String` that `String(value)` would allocate.
    package static func write(integer value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = digits.count
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: digits[position...])
        }
    }

    package static func write(string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        let isPlain = string.withUTF8 { utf8 in
            // Most strings need no escaping: copy them whole.
            guard UnsafeRawBufferPointer(utf8).firstJSONSpecial(from: 0, includingDelete: true) == utf8.count
            else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if isPlain {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                ])
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
