import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

extension GVariant {
    /// The value in GLib's text format with type annotations where the text alone would not
    /// give the type back, exactly as `g_variant_print(value, TRUE)` prints it (and so as
    /// `dconf dump` and `gsettings get` do): `uint32 7`, `@as []`, `{'a': <1>}`.
    package var text: String { text(annotated: true) }

    /// The value in GLib's text format, annotated (`text`) or not (`g_variant_print(value, FALSE)`).
    package func text(annotated: Bool) -> String {
        var output = ""
        print(into: &output, annotated: annotated)
        return output
    }

    private func print(into output: inout String, annotated: Bool) {
        switch self {
        case .maybe(_, let child):
            if annotated { output += "@\(type) " }
            if let child {
                let printed = child.text(annotated: false)
                if printed.hasSuffix("nothing") { output += "just " }
                output += printed
            } else {
                output += "nothing"
            }
        case .array(let element, let children):
            if element == .byte, let bytes = Self.byteString(children) {
                output += bytes
                return
            }
            guard !children.isEmpty else {
                if annotated { output += "@\(type) " }
                output += element.isDictEntry ? "{}" : "[]"
                return
            }
            output += element.isDictEntry ? "{" : "["
            var annotateNext = annotated
            for (index, child) in children.enumerated() {
                if index > 0 { output += ", " }
                if case .dictEntry(let key, let value) = child {
                    key.print(into: &output, annotated: annotateNext)
                    output += ": "
                    value.print(into: &output, annotated: annotateNext)
                } else {
                    child.print(into: &output, annotated: annotateNext)
                }
                annotateNext = false
            }
            output += element.isDictEntry ? "}" : "]"
        case .tuple(let members):
            output += "("
            for (index, member) in members.enumerated() {
                member.print(into: &output, annotated: annotated)
                if members.count == 1 || index < members.count - 1 { output += "," }
                if index < members.count - 1 { output += " " }
            }
            output += ")"
        case .dictEntry(let key, let value):
            output += "{"
            key.print(into: &output, annotated: annotated)
            output += ", "
            value.print(into: &output, annotated: annotated)
            output += "}"
        case .variant(let child):
            // A variant's content always carries its type.
            output += "<"
            child.print(into: &output, annotated: true)
            output += ">"
        case .boolean(let value): output += value ? "true" : "false"
        case .string(let value): Self.quote(value, into: &output)
        case .byte(let value):
            if annotated { output += "byte " }
            output += "0x" + (value < 16 ? "0" : "") + String(value, radix: 16)
        case .int16(let value): output += (annotated ? "int16 " : "") + String(value)
        case .uint16(let value): output += (annotated ? "uint16 " : "") + String(value)
        // int32 is what an unannotated number means: never annotated.
        case .int32(let value): output += String(value)
        case .handle(let value): output += (annotated ? "handle " : "") + String(value)
        case .uint32(let value): output += (annotated ? "uint32 " : "") + String(value)
        case .int64(let value): output += (annotated ? "int64 " : "") + String(value)
        case .uint64(let value): output += (annotated ? "uint64 " : "") + String(value)
        case .double(let value): output += Self.format(value)
        case .objectPath(let value): output += (annotated ? "objectpath " : "") + "'\(value)'"
        case .signature(let value): output += (annotated ? "signature " : "") + "'\(value)'"
        }
    }

    /// `%.17g`, then `.0` when that reads as an integer (GLib's `g_ascii_dtostr`).
    static func format(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([value]) { arguments in vsnprintf(&buffer, buffer.count, "%.17g", arguments) }
        var text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "n" || $0 == "N" }) { text += ".0" }
        return text
    }

    /// A string between single quotes (double when it holds a single quote), escaped as GLib
    /// escapes it: the quote and backslash, and every character that is not printable.
    private static func quote(_ value: String, into output: inout String) {
        let quote: Unicode.Scalar = value.unicodeScalars.contains("'") ? "\"" : "'"
        output.unicodeScalars.append(quote)
        for scalar in value.unicodeScalars {
            if scalar == quote || scalar == "\\" { output += "\\" }
            switch scalar.properties.generalCategory {
            case .control, .format, .unassigned, .surrogate:
                output += "\\"
                switch scalar {
                case "\u{07}": output += "a"
                case "\u{08}": output += "b"
                case "\u{0C}": output += "f"
                case "\n": output += "n"
                case "\r": output += "r"
                case "\t": output += "t"
                case "\u{0B}": output += "v"
                default:
                    let hex = String(scalar.value, radix: 16)
                    output +=
                        scalar.value < 0x10000
                        ? "u" + String(repeating: "0", count: 4 - hex.count) + hex
                        : "U" + String(repeating: "0", count: 8 - hex.count) + hex
                }
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        output.unicodeScalars.append(quote)
    }

    /// `b'…'` for bytes whose only NUL is the last one, escaped as `g_strescape` does; nil for
    /// other bytes (printed as an array of bytes).
    private static func byteString(_ children: [GVariant]) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(children.count)
        for child in children {
            guard case .byte(let byte) = child else { return nil }
            bytes.append(byte)
        }
        guard let zero = bytes.firstIndex(of: 0), zero == bytes.count - 1 else { return nil }
        bytes.removeLast()
        let quote = bytes.contains(UInt8(ascii: "'")) ? "\"" : "'"
        var output = "b" + quote
        for byte in bytes {
            switch byte {
            case 0x08: output += "\\b"
            case 0x0C: output += "\\f"
            case 0x0A: output += "\\n"
            case 0x0D: output += "\\r"
            case 0x09: output += "\\t"
            case 0x0B: output += "\\v"
            case UInt8(ascii: "\\"): output += "\\\\"
            case UInt8(ascii: "\""): output += "\\\""
            case ..<0x20, 0x7F...:
                let octal = String(byte, radix: 8)
                output += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default: output.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return output + quote
    }
}

extension GVariantType {
    var isDictEntry: Bool {
        if case .dictEntry = self { return true }
        return false
    }
}
