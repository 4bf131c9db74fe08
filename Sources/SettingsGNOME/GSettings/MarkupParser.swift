import SettingsStore

/// An element of a markup document: its name, attributes, text and child elements.
struct MarkupElement: Sendable {
    var name: String
    var attributes: [String: String] = [:]
    var children: [MarkupElement] = []
    /// The element's own character data (children's excluded), entities resolved.
    var text = ""
    /// The line the element starts on, for messages.
    var line: Int

    /// The children named `name`.
    func children(named name: String) -> [MarkupElement] { children.filter { $0.name == name } }
}

/// The subset of XML that GSettings schema files are written in, as GLib's GMarkup reads it:
/// elements, attributes, character data, the five named entities and character references,
/// CDATA, comments; the XML declaration, processing instructions and a DOCTYPE are skipped.
/// No external entities are ever fetched.
struct MarkupParser {
    struct Failure: Error {
        let line: Int
        let reason: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    /// The document element of `text`.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> MarkupElement {
        var parser = MarkupParser(bytes: bytes)
        return try parser.document()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func document() throws(Failure) -> MarkupElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        var root: MarkupElement?
        while true {
            skipSpace()
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: "<") else { throw fail("text outside the document element") }
            if try skipMarkupDeclaration() { continue }
            guard root == nil else { throw fail("a second document element") }
            root = try element(depth: 0)
        }
        guard let root else { throw fail("no document element") }
        return root
    }

    private func fail(_ reason: String) -> Failure { Failure(line: line, reason: reason) }

    private mutating func advance(_ count: Int = 1) {
        for _ in 0..<count where index < bytes.count {
            if bytes[index] == 0x0A { line += 1 }
            index += 1
        }
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
    }

    private func looking(at text: String) -> Bool {
        bytes[index...].starts(with: text.utf8)
    }

    private mutating func skip(past terminator: String, what: String) throws(Failure) {
        let start = line
        while index < bytes.count, !looking(at: terminator) { advance() }
        guard index < bytes.count else { throw Failure(line: start, reason: "unterminated \(what)") }
        advance(terminator.utf8.count)
    }

    /// Skips a comment, processing instruction or DOCTYPE at `<`; false for anything else.
    private mutating func skipMarkupDeclaration() throws(Failure) -> Bool {
        if looking(at: "<!--") {
            try skip(past: "-->", what: "comment")
        } else if looking(at: "<?") {
            try skip(past: "?>", what: "processing instruction")
        } else if looking(at: "<!DOCTYPE") {
            // An internal subset may hold '>' inside brackets.
            var depth = 0
            let start = line
            while index < bytes.count {
                let byte = bytes[index]
                advance()
                if byte == UInt8(ascii: "[") { depth += 1 }
                if byte == UInt8(ascii: "]") { depth -= 1 }
                if byte == UInt8(ascii: ">"), depth <= 0 { return true }
            }
            throw Failure(line: start, reason: "unterminated DOCTYPE")
        } else {
            return false
        }
        return true
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
            || (0x61...0x7A).contains(byte)
            || [UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":")].contains(byte)
    }

    private mutating func name() throws(Failure) -> String {
        let start = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { advance() }
        guard index > start else { throw fail("expected a name") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func element(depth: Int) throws(Failure) -> MarkupElement {
        guard depth < 64 else { throw fail("elements nested more than 64 deep") }
        advance()  // <
        var element = MarkupElement(name: try name(), line: line)
        while true {
            skipSpace()
            guard index < bytes.count else { throw fail("unterminated <\(element.name)>") }
            if looking(at: "/>") {
                advance(2)
                return element
            }
            if bytes[index] == UInt8(ascii: ">") {
                advance()
                break
            }
            let attribute = try name()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw fail("expected '=' after attribute '\(attribute)'")
            }
            advance()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'")
            else {
                throw fail("attribute '\(attribute)' needs a quoted value")
            }
            let quote = bytes[index]
            advance()
            let start = index
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw fail("'<' in attribute '\(attribute)'") }
                advance()
            }
            guard index < bytes.count else { throw fail("unterminated attribute '\(attribute)'") }
            guard element.attributes[attribute] == nil else {
                throw fail("attribute '\(attribute)' given twice")
            }
            element.attributes[attribute] = try Self.resolveEntities(bytes[start..<index], line: line)
            advance()
        }
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fail("<\(element.name)> is not closed") }
            if bytes[index] != UInt8(ascii: "<") {
                text.append(bytes[index])
                advance()
            } else if looking(at: "</") {
                advance(2)
                let closing = try name()
                guard closing == element.name else {
                    throw fail("</\(closing)> closes <\(element.name)>")
                }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
                    throw fail("expected '>'")
                }
                advance()
                element.text = try Self.resolveEntities(text[...], line: element.line)
                return element
            } else if looking(at: "<![CDATA[") {
                advance(9)
                let start = index
                try skip(past: "]]>", what: "CDATA section")
                // Escaped so that entity resolution leaves the section's text as it is.
                for byte in bytes[start..<index - 3] {
                    text += byte == UInt8(ascii: "&") ? Array("&amp;".utf8) : [byte]
                }
            } else if try skipMarkupDeclaration() {
                continue
            } else {
                element.children.append(try self.element(depth: depth + 1))
            }
        }
    }

    private static func resolveEntities(_ raw: ArraySlice<UInt8>, line: Int) throws(Failure) -> String {
        guard raw.contains(UInt8(ascii: "&")) else {
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw Failure(line: line, reason: "text is not UTF-8")
            }
            return text
        }
        var output: [UInt8] = []
        var index = raw.startIndex
        while index < raw.endIndex {
            guard raw[index] == UInt8(ascii: "&") else {
                output.append(raw[index])
                index += 1
                continue
            }
            guard let end = raw[index...].firstIndex(of: UInt8(ascii: ";")) else {
                throw Failure(line: line, reason: "'&' does not start an entity")
            }
            let name = String(decoding: raw[(index + 1)..<end], as: UTF8.self)
            let named = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
            if let replacement = named[name] {
                output += Array(replacement.utf8)
            } else if name.hasPrefix("#"),
                let value = name.hasPrefix("#x")
                    ? UInt32(name.dropFirst(2), radix: 16) : UInt32(name.dropFirst()),
                value != 0, let scalar = Unicode.Scalar(value)
            {
                output += Array(String(Character(scalar)).utf8)
            } else {
                throw Failure(line: line, reason: "unknown entity '&\(name);'")
            }
            index = end + 1
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw Failure(line: line, reason: "text is not UTF-8")
        }
        return text
    }
}
