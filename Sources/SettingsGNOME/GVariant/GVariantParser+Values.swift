import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The second pass: a syntax tree becomes a value of a given type, or of the type its pattern
/// resolves to.
extension GVariantParser {
    /// The value of `node` with the type GLib would infer for it.
    static func resolve(_ node: Node) throws(Failure) -> GVariant {
        var resolved: [UInt8] = []
        for byte in try pattern(of: node) {
            switch byte {
            case UInt8(ascii: "*"): throw Failure(range: node.range, reason: "unable to infer type")
            case UInt8(ascii: "M"): continue
            case UInt8(ascii: "S"): resolved.append(UInt8(ascii: "s"))
            case UInt8(ascii: "N"): resolved.append(UInt8(ascii: "i"))
            default: resolved.append(byte)
            }
        }
        let type: GVariantType
        do throws(SettingsError) {
            type = try GVariantType(String(decoding: resolved, as: UTF8.self))
        } catch {
            throw Failure(range: node.range, reason: "unable to infer type")
        }
        return try value(of: node, as: type)
    }

    // MARK: Patterns

    /// GLib's pattern of a node: a type string that may hold `N` (any number), `S` (any string
    /// type), `M` (possibly inside maybes) and `*` (anything).
    static func pattern(of node: Node) throws(Failure) -> [UInt8] {
        switch node.syntax {
        case .number(let token):
            let isFloating =
                token.contains(".") || (!token.hasPrefix("0x") && token.contains("e"))
                || token.contains("inf")
                || token.contains("nan")
            return Array((isFloating ? "Md" : "MN").utf8)
        case .string: return Array("MS".utf8)
        case .bytes: return Array("May".utf8)
        case .boolean: return Array("Mb".utf8)
        case .variant: return Array("Mv".utf8)
        case .maybe(let child):
            return [UInt8(ascii: "m")]
                + (try child.map { child throws(Failure) in try pattern(of: child) } ?? [UInt8(ascii: "*")])
        case .array(let children):
            return Array("Ma".utf8)
                + (children.isEmpty ? [UInt8(ascii: "*")] : try commonPattern(of: children))
        case .tuple(let children):
            var result = Array("M(".utf8)
            for child in children { result += try pattern(of: child) }
            return result + [UInt8(ascii: ")")]
        case .annotated(let type, _):
            return Array(type.description.utf8)
        case .entry(let key, let value):
            return try dictionaryPattern(keys: [key], firstValue: value, isEntry: true, node: node)
        case .dictionary(let keys, let values):
            guard let firstValue = values.first else { return Array("Ma{**}".utf8) }
            return try dictionaryPattern(keys: keys, firstValue: firstValue, isEntry: false, node: node)
        }
    }

    private static func dictionaryPattern(keys: [Node], firstValue: Node, isEntry: Bool, node: Node)
        throws(Failure) -> [UInt8]
    {
        let keyPattern = try commonPattern(of: keys)
        let keyCharacter =
            keyPattern.first == UInt8(ascii: "M") ? keyPattern.dropFirst().first : keyPattern.first
        guard let keyCharacter, "bynqiuxthdsogNS".utf8.contains(keyCharacter) else {
            throw Failure(range: node.range, reason: "dictionary keys must have basic types")
        }
        return Array((isEntry ? "M{" : "Ma{").utf8) + [keyCharacter] + (try pattern(of: firstValue))
            + [UInt8(ascii: "}")]
    }

    /// The pattern every node fits, or the first conflicting pair.
    private static func commonPattern(of nodes: [Node]) throws(Failure) -> [UInt8] {
        var merged = try pattern(of: nodes[0])
        for index in nodes.indices.dropFirst() {
            let next = try pattern(of: nodes[index])
            guard let combined = coalesce(merged, next) else {
                var conflict = nodes[0]
                for earlier in nodes[..<index] {
                    if let earlierPattern = try? pattern(of: earlier), coalesce(next, earlierPattern) == nil {
                        conflict = earlier
                        break
                    }
                }
                throw Failure(
                    range: conflict.range.lowerBound..<nodes[index].range.upperBound,
                    reason: "unable to find a common type")
            }
            merged = combined
        }
        return merged
    }

    /// The most specific pattern both patterns fit, or nil when none does.
    static func coalesce(_ left: [UInt8], _ right: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var sides = (left[...], right[...])
        while let a = sides.0.first, let b = sides.1.first {
            if a == b {
                output.append(a)
                sides.0.removeFirst()
                sides.1.removeFirst()
                continue
            }
            guard
                let step = coalesceStep(&sides.0, &sides.1, &output)
                    ?? coalesceStep(&sides.1, &sides.0, &output)
            else { return nil }
            _ = step
        }
        return sides.0.isEmpty && sides.1.isEmpty ? output : nil
    }

    /// One step where `one` holds a wildcard the other side fills; nil when `one` has none here.
    private static func coalesceStep(
        _ one: inout ArraySlice<UInt8>, _ other: inout ArraySlice<UInt8>, _ output: inout [UInt8]
    )
        -> Void?
    {
        guard let a = one.first, let b = other.first else { return nil }
        switch a {
        case UInt8(ascii: "*") where b != UInt8(ascii: ")"):
            output += takeOneType(&other)
            one.removeFirst()
        case UInt8(ascii: "M") where b == UInt8(ascii: "m"):
            output.append(b)
            other.removeFirst()
        case UInt8(ascii: "M"):
            one.removeFirst()
        case UInt8(ascii: "N") where "ynqiuxthd".utf8.contains(b),
            UInt8(ascii: "S") where "sog".utf8.contains(b):
            output.append(b)
            other.removeFirst()
            one.removeFirst()
        default:
            return nil
        }
        return ()
    }

    /// Removes and returns one complete pattern from the front of `pattern`.
    private static func takeOneType(_ pattern: inout ArraySlice<UInt8>) -> [UInt8] {
        var taken: [UInt8] = []
        while let byte = pattern.first,
            byte == UInt8(ascii: "a") || byte == UInt8(ascii: "m") || byte == UInt8(ascii: "M")
        {
            taken.append(pattern.removeFirst())
        }
        var brackets = 0
        repeat {
            guard let byte = pattern.first else { break }
            if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "{") {
                brackets += 1
            } else if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "}") {
                brackets -= 1
            }
            taken.append(pattern.removeFirst())
        } while brackets > 0
        return taken
    }

    // MARK: Values

    /// The value of `node` as `type`.
    static func value(of node: Node, as type: GVariantType) throws(Failure) -> GVariant {
        switch node.syntax {
        case .maybe(let child):
            guard case .maybe(let element) = type else { throw typeError(node, type) }
            return .maybe(
                element: element, try child.map { child throws(Failure) in try value(of: child, as: element) }
            )
        case .annotated(_, let child):
            // As in GLib, an annotation steers inference but the wanted type decides.
            return try value(of: child, as: type)
        default:
            // Any other value may stand for itself wrapped in maybes (`5` for `mi`).
            var elements: [GVariantType] = []
            var base = type
            while case .maybe(let element) = base {
                elements.append(element)
                base = element
            }
            var result = try baseValue(of: node, as: base)
            for element in elements.reversed() { result = .maybe(element: element, result) }
            return result
        }
    }

    private static func typeError(_ node: Node, _ type: GVariantType) -> Failure {
        Failure(range: node.range, reason: "can not parse as value of type '\(type)'")
    }

    private static func baseValue(of node: Node, as type: GVariantType) throws(Failure) -> GVariant {
        switch (node.syntax, type) {
        case (.boolean(let value), .boolean):
            return .boolean(value)
        case (.string(let text), .string):
            return .string(text)
        case (.string(let text), .objectPath):
            guard GVariant.isObjectPath(text) else {
                throw Failure(range: node.range, reason: "not a valid object path")
            }
            return .objectPath(text)
        case (.string(let text), .signature):
            guard GVariant.isSignature(text) else {
                throw Failure(range: node.range, reason: "not a valid signature")
            }
            return .signature(text)
        case (.bytes(let bytes), .array(.byte)):
            return .array(element: .byte, bytes.map(GVariant.byte))
        case (.number(let token), _):
            return try number(token, as: type, node: node)
        case (.variant(let child), .variant):
            return .variant(try resolve(child))
        case (.array(let children), .array(let element)):
            var values: [GVariant] = []
            values.reserveCapacity(children.count)
            for child in children { values.append(try value(of: child, as: element)) }
            return .array(element: element, values)
        case (.tuple(let children), .tuple(let members)):
            guard children.count == members.count else { throw typeError(node, type) }
            var values: [GVariant] = []
            for (child, member) in zip(children, members) { values.append(try value(of: child, as: member)) }
            return .tuple(values)
        case (.entry(let key, let value), .dictEntry(let keyType, let valueType)):
            return .dictEntry(
                key: try Self.value(of: key, as: keyType), value: try Self.value(of: value, as: valueType))
        case (.dictionary(let keys, let values), .array(.dictEntry(let keyType, let valueType))):
            var entries: [GVariant] = []
            for (key, value) in zip(keys, values) {
                entries.append(
                    .dictEntry(
                        key: try Self.value(of: key, as: keyType),
                        value: try Self.value(of: value, as: valueType)))
            }
            return .array(element: .dictEntry(key: keyType, value: valueType), entries)
        default:
            throw typeError(node, type)
        }
    }

    private static func number(_ token: String, as type: GVariantType, node: Node) throws(Failure) -> GVariant
    {
        if type == .double {
            errno = 0
            var end: UnsafeMutablePointer<CChar>?
            let (value, consumed) = token.withCString { start in
                let value = strtod(start, &end)
                return (value, end.map { $0 - UnsafeMutablePointer(mutating: start) } ?? 0)
            }
            if value != 0, errno == ERANGE {
                throw Failure(range: node.range, reason: "number too big for any type")
            }
            guard consumed == token.utf8.count else { throw invalidCharacter(node, at: consumed) }
            return .double(value)
        }
        guard type.isInteger else { throw typeError(node, type) }
        var digits = Substring(token)
        let isNegative = digits.first == "-"
        if isNegative { digits = digits.dropFirst() }
        if digits.first == "+" { digits = digits.dropFirst() }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X"), let next = digits.dropFirst(2).first,
            next.isHexDigit
        {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.hasPrefix("0"), digits.count > 1 {
            radix = 8
        }
        let valid = digits.prefix { $0.isASCII && $0.hexDigitValue.map { $0 < radix } == true }
        guard !valid.isEmpty, valid.count == digits.count else {
            throw invalidCharacter(
                node, at: token.utf8.count - digits.utf8.count + valid.utf8.count)
        }
        guard let magnitude = UInt64(valid, radix: radix) else {
            throw Failure(range: node.range, reason: "integer too big for any type")
        }
        let negative = isNegative && magnitude != 0
        let overflow = Failure(range: node.range, reason: "number out of range for type '\(type)'")
        func signed(_ maximum: UInt64) throws(Failure) -> Int64 {
            guard magnitude - (negative ? 1 : 0) <= maximum else { throw overflow }
            return negative ? (magnitude == 1 << 63 ? Int64.min : -Int64(magnitude)) : Int64(magnitude)
        }
        func unsigned(_ maximum: UInt64) throws(Failure) -> UInt64 {
            guard !negative, magnitude <= maximum else { throw overflow }
            return magnitude
        }
        switch type {
        case .byte: return .byte(UInt8(try unsigned(UInt64(UInt8.max))))
        case .int16: return .int16(Int16(try signed(UInt64(Int16.max))))
        case .uint16: return .uint16(UInt16(try unsigned(UInt64(UInt16.max))))
        case .int32: return .int32(Int32(try signed(UInt64(Int32.max))))
        case .uint32: return .uint32(UInt32(try unsigned(UInt64(UInt32.max))))
        case .int64: return .int64(try signed(UInt64(Int64.max)))
        case .uint64: return .uint64(try unsigned(UInt64.max))
        case .handle: return .handle(Int32(try signed(UInt64(Int32.max))))
        default: throw typeError(node, type)
        }
    }

    private static func invalidCharacter(_ node: Node, at offset: Int) -> Failure {
        let position = node.range.lowerBound + offset
        return Failure(range: position..<position + 1, reason: "invalid character in number")
    }
}
