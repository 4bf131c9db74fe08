package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

extension GVariant {
    /// Parses GLib's GVariant text format, as `g_variant_parse` does: the form `gsettings get`,
    /// `dconf read` and `dconf dump` print (`uint32 7`, `@as []`, `[('xkb', 'us')]`, `<<7>>`).
    ///
    /// With `type`, the text is read as a value of that type (`5` as `uint32 5` for `u`);
    /// without it, the type is inferred the way GLib infers it (numbers are `i` or `d`,
    /// strings `s`, an empty array needs an annotation).
    ///
    /// - Throws: `invalidValue` quoting the text, with where in it and what is wrong.
    package init(parsing text: String, type: GVariantType? = nil) throws(SettingsError) {
        var parser = GVariantParser(text: text)
        do throws(GVariantParser.Failure) {
            self = try parser.parseValue(type: type)
        } catch {
            throw SettingsError(
                .invalidValue,
                "'\(text.debugDescriptionTruncated)' is not GVariant text\(type.map { " of type '\($0)'" } ?? ""): \(error.location): \(error.reason)"
            )
        }
    }
}

/// A port of the two passes of GLib's parser in our own words: the text becomes a syntax tree,
/// then a value of the wanted type, or of a type inferred from the tree's *pattern* (GLib's
/// `N` any number, `S` any string, `M` a value that may be wrapped in maybes, `*` anything).
struct GVariantParser {
    struct Failure: Error {
        let range: Range<Int>
        let reason: String

        var location: String {
            range.isEmpty ? "at \(range.lowerBound)" : "at \(range.lowerBound)-\(range.upperBound)"
        }
    }

    indirect enum Syntax {
        case array([Node])
        case tuple([Node])
        case variant(Node)
        case dictionary(keys: [Node], values: [Node])
        case entry(key: Node, value: Node)
        case string(String)
        case bytes([UInt8])
        case number(String)
        case boolean(Bool)
        case maybe(Node?)
        case annotated(GVariantType, Node)
    }

    struct Node {
        let syntax: Syntax
        let range: Range<Int>
    }

    private let bytes: [UInt8]
    private var position = 0
    /// The current token, once found.
    private var token: Range<Int>?

    package init(text: String) {
        bytes = Array(text.utf8)
    }

    mutating func parseValue(type: GVariantType?) throws(Failure) -> GVariant {
        if let zero = bytes.firstIndex(of: 0) {
            throw Failure(range: zero..<zero + 1, reason: "a NUL byte is not text")
        }
        let node = try parse(depth: 0)
        let value = if let type { try Self.value(of: node, as: type) } else { try Self.resolve(node) }
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
        guard token == nil || token?.isEmpty == true, position == bytes.count else {
            let start = token?.lowerBound ?? position
            throw Failure(range: start..<start, reason: "expected end of input")
        }
        return value
    }

    // MARK: Tokens

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Finds the current token; false at the end of the text.
    @discardableResult
    private mutating func prepare() -> Bool {
        if let token { return !token.isEmpty }
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
        guard position < bytes.count else {
            token = position..<position
            return false
        }
        let start = position
        var end = start + 1
        let first = bytes[start]
        func scanQuoted(from open: Int) -> Int {
            let quote = bytes[open]
            var index = open + 1
            while index < bytes.count {
                if bytes[index] == quote { return index + 1 }
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 1
                    if index == bytes.count { return index }
                }
                index += 1
            }
            return index
        }
        switch first {
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), 0x30...0x39:
            end = start
            while end < bytes.count,
                Self.isAlphanumeric(bytes[end])
                    || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: ".")]
                        .contains(bytes[end])
            {
                end += 1
            }
        case UInt8(ascii: "b")
        where start + 1 < bytes.count
            && (bytes[start + 1] == UInt8(ascii: "'") || bytes[start + 1] == UInt8(ascii: "\"")):
            end = scanQuoted(from: start + 1)
        case 0x61...0x7A:
            end = start
            while end < bytes.count, Self.isAlphanumeric(bytes[end]) { end += 1 }
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            end = scanQuoted(from: start)
        case UInt8(ascii: "@"):
            var brackets = 0
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ">")
                    || byte == UInt8(ascii: "]") || Self.isSpace(byte)
                {
                    break
                }
                if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "{") {
                    brackets += 1
                } else if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "}") {
                    if brackets == 0 { break }
                    brackets -= 1
                }
                end += 1
            }
        default:
            break
        }
        token = start..<end
        position = end
        return true
    }

    private mutating func peek(_ character: UInt8) -> Bool {
        guard prepare(), let token else { return false }
        return bytes[token.lowerBound] == character
    }

    private mutating func peek(_ text: String) -> Bool {
        guard prepare(), let token else { return false }
        return bytes[token].elementsEqual(text.utf8)
    }

    private mutating func consume(_ text: String) -> Bool {
        guard peek(text) else { return false }
        token = nil
        return true
    }

    private mutating func require(_ text: String, _ purpose: String) throws(Failure) {
        guard consume(text) else {
            let start = token?.lowerBound ?? position
            throw Failure(range: start..<start, reason: "expected '\(text)'\(purpose)")
        }
    }

    private mutating func takeToken() -> (text: [UInt8], range: Range<Int>) {
        prepare()
        let range = token ?? position..<position
        token = nil
        return (Array(bytes[range]), range)
    }

    // MARK: Syntax

    private mutating func parse(depth: Int) throws(Failure) -> Node {
        prepare()
        let start = token?.lowerBound ?? position
        guard depth < GVariantType.maximumDepth else {
            throw Failure(
                range: start..<start, reason: "nested more than \(GVariantType.maximumDepth) levels deep")
        }
        let syntax: Syntax
        if peek(UInt8(ascii: "[")) {
            syntax = .array(
                try parseList(close: "]", depth: depth, purpose: " or ']' to follow array element"))
        } else if peek(UInt8(ascii: "(")) {
            syntax = .tuple(try parseTuple(depth: depth))
        } else if peek(UInt8(ascii: "<")) {
            token = nil
            let child = try parse(depth: depth + 1)
            try require(">", " to follow variant value")
            syntax = .variant(child)
        } else if peek(UInt8(ascii: "{")) {
            syntax = try parseDictionary(depth: depth)
        } else if consume("true") {
            syntax = .boolean(true)
        } else if consume("false") {
            syntax = .boolean(false)
        } else if isNumeric() || peek("inf") || peek("nan") {
            syntax = .number(String(decoding: takeToken().text, as: UTF8.self))
        } else if peek(UInt8(ascii: "n")) || peek(UInt8(ascii: "j")) {
            if consume("just") {
                syntax = .maybe(try parse(depth: depth + 1))
            } else if consume("nothing") {
                syntax = .maybe(nil)
            } else {
                throw unknownKeyword()
            }
        } else if peek(UInt8(ascii: "@")) || isKeyword() {
            syntax = try parseAnnotation(depth: depth)
        } else if peek(UInt8(ascii: "'")) || peek(UInt8(ascii: "\"")) {
            syntax = .string(try parseString())
        } else if peek(UInt8(ascii: "b")), let token, token.count > 1,
            bytes[token.lowerBound + 1] == UInt8(ascii: "'")
                || bytes[token.lowerBound + 1] == UInt8(ascii: "\"")
        {
            syntax = .bytes(try parseByteString(token))
        } else {
            throw Failure(range: start..<start, reason: "expected value")
        }
        return Node(syntax: syntax, range: start..<(token?.lowerBound ?? position))
    }

    private mutating func isNumeric() -> Bool {
        guard prepare(), let token else { return false }
        let first = bytes[token.lowerBound]
        return (0x30...0x39).contains(first) || first == UInt8(ascii: "-") || first == UInt8(ascii: "+")
            || first == UInt8(ascii: ".")
    }

    private mutating func isKeyword() -> Bool {
        guard prepare(), let token else { return false }
        let next = token.lowerBound + 1
        return Self.isAlpha(bytes[token.lowerBound]) && next < bytes.count && Self.isAlpha(bytes[next])
    }

    private mutating func unknownKeyword() -> Failure {
        let range = token ?? position..<position
        return Failure(range: range, reason: "unknown keyword")
    }

    private mutating func parseList(close: String, depth: Int, purpose: String) throws(Failure) -> [Node] {
        token = nil
        var children: [Node] = []
        while !consume(close) {
            if !children.isEmpty { try require(",", purpose) }
            children.append(try parse(depth: depth + 1))
        }
        return children
    }

    private mutating func parseTuple(depth: Int) throws(Failure) -> [Node] {
        token = nil
        var children: [Node] = []
        while !consume(")") {
            if children.count > 1 { try require(",", " or ')' to follow tuple element") }
            children.append(try parse(depth: depth + 1))
            if children.count == 1 { try require(",", " after first tuple element") }
        }
        return children
    }

    private mutating func parseDictionary(depth: Int) throws(Failure) -> Syntax {
        token = nil
        if consume("}") { return .dictionary(keys: [], values: []) }
        let firstKey = try parse(depth: depth + 1)
        let isEntry = consume(",")
        if !isEntry { try require(":", " or ',' to follow dictionary entry key") }
        let firstValue = try parse(depth: depth + 1)
        if isEntry {
            try require("}", " at end of dictionary entry")
            return .entry(key: firstKey, value: firstValue)
        }
        var keys = [firstKey]
        var values = [firstValue]
        while !consume("}") {
            try require(",", " or '}' to follow dictionary entry")
            keys.append(try parse(depth: depth + 1))
            try require(":", " to follow dictionary entry key")
            values.append(try parse(depth: depth + 1))
        }
        return .dictionary(keys: keys, values: values)
    }

    private mutating func parseAnnotation(depth: Int) throws(Failure) -> Syntax {
        let type: GVariantType
        if peek(UInt8(ascii: "@")) {
            let (text, range) = takeToken()
            do throws(SettingsError) {
                type = try GVariantType(String(decoding: text.dropFirst(), as: UTF8.self))
            } catch {
                throw Failure(range: range, reason: "invalid type declaration")
            }
        } else {
            let keywords: [(String, GVariantType)] = [
                ("boolean", .boolean), ("byte", .byte), ("int16", .int16), ("uint16", .uint16),
                ("int32", .int32), ("handle", .handle), ("uint32", .uint32), ("int64", .int64),
                ("uint64", .uint64), ("double", .double), ("string", .string),
                ("objectpath", .objectPath), ("signature", .signature),
            ]
            guard let match = keywords.first(where: { peek($0.0) }) else { throw unknownKeyword() }
            token = nil
            type = match.1
        }
        return .annotated(type, try parse(depth: depth + 1))
    }

    /// The characters of a quoted string token, unescaped as GLib does.
    private mutating func parseString() throws(Failure) -> String {
        let (text, range) = takeToken()
        let output = try Self.unescape(text, opening: 0, range: range, isByteString: false)
        guard let string = String(validating: output, as: UTF8.self) else {
            throw Failure(range: range, reason: "not valid UTF-8")
        }
        return string
    }

    /// The bytes of a `b'…'` token, with the NUL GLib ends a byte string with.
    private mutating func parseByteString(_ range: Range<Int>) throws(Failure) -> [UInt8] {
        var output = try Self.unescape(takeToken().text, opening: 1, range: range, isByteString: true)
        // GLib builds the value with strlen: an escaped NUL ends the byte string.
        if let zero = output.firstIndex(of: 0) { output.removeSubrange(zero...) }
        return output + [0]
    }

    /// The bytes between the quote at `opening` and the one that closes it, escapes resolved:
    /// `\a`–`\v`, a backslash before a newline dropped, any other escaped byte kept; strings
    /// add `\uXXXX` and `\UXXXXXXXX`, byte strings octal `\NNN`.
    private static func unescape(_ text: [UInt8], opening: Int, range: Range<Int>, isByteString: Bool)
        throws(Failure) -> [UInt8]
    {
        let quote = text[opening]
        var output: [UInt8] = []
        var index = opening + 1
        let unterminated = Failure(range: range, reason: "unterminated string constant")
        while true {
            guard index < text.count else { throw unterminated }
            let byte = text[index]
            if byte == quote { return output }
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < text.count else { throw unterminated }
            let escaped = text[index]
            index += 1
            if !isByteString, escaped == UInt8(ascii: "u") || escaped == UInt8(ascii: "U") {
                let length = escaped == UInt8(ascii: "u") ? 4 : 8
                let digits = text.dropFirst(index).prefix(length)
                guard digits.count == length,
                    let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16),
                    value != 0, let scalar = Unicode.Scalar(value)
                else {
                    throw Failure(range: range, reason: "invalid \(length)-character unicode escape")
                }
                output.append(contentsOf: String(Character(scalar)).utf8)
                index += length
            } else if isByteString, (0x30...0x37).contains(escaped) {
                var value = escaped - 0x30
                for _ in 0..<2 where index < text.count && (0x30...0x37).contains(text[index]) {
                    value = (value << 3) | (text[index] - 0x30)
                    index += 1
                }
                output.append(value)
            } else if let control = controlEscape(escaped) {
                output.append(control)
            } else if escaped != UInt8(ascii: "\n") {
                output.append(escaped)
            }
        }
    }

    private static func controlEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "a"): 0x07
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        case UInt8(ascii: "v"): 0x0B
        default: nil
        }
    }
}
