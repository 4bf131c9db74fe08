/// Turns the bytes a terminal sends into key presses: UTF-8 text, control keys, the CSI and SS3
/// sequences of arrows, paging and editing keys (xterm's and the VT220's forms), and SGR mouse
/// reports. Bytes of a sequence or character cut between two reads wait for the next; an escape
/// that ends a read is the Escape key (a terminal sends a sequence in one write).
package struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    /// A decoder with nothing pending.
    package init() {}

    /// The key presses `bytes` complete, in order.
    package mutating func decode(_ bytes: [UInt8]) -> [KeyPress] {
        pending += bytes
        var keys: [KeyPress] = []
        var index = 0
        while index < pending.count {
            guard let (key, length) = Self.key(at: index, in: pending) else { break }
            if let key { keys.append(key) }
            index += length
        }
        pending.removeFirst(index)
        if pending == [0x1B] {
            keys.append(.escape)
            pending.removeAll()
        }
        // Anything longer that cannot complete is dropped rather than held for ever.
        if pending.count > 64 { pending.removeAll() }
        return keys
    }

    /// The key at `index` and the bytes it takes (a nil key: bytes that mean nothing here), or
    /// nil when the bytes there are not complete yet.
    private static func key(at index: Int, in bytes: [UInt8]) -> (KeyPress?, Int)? {
        let byte = bytes[index]
        switch byte {
        case 0x1B: return escapeSequence(at: index, in: bytes)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x01...0x1A: return (.control(Character(Unicode.Scalar(byte + 0x60))), 1)
        case 0x00...0x1F: return (nil, 1)
        default: return character(at: index, in: bytes)
        }
    }

    /// A UTF-8 character; an invalid byte is skipped.
    private static func character(at index: Int, in bytes: [UInt8]) -> (KeyPress?, Int)? {
        let byte = bytes[index]
        let length =
            switch byte {
            case 0x00..<0x80: 1
            case 0xC2..<0xE0: 2
            case 0xE0..<0xF0: 3
            case 0xF0..<0xF5: 4
            default: 0
            }
        guard length > 0 else { return (nil, 1) }
        guard index + length <= bytes.count else { return nil }
        let slice = bytes[index..<index + length]
        guard slice.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }),
            let text = String(validating: slice, as: UTF8.self), let character = text.first
        else { return (nil, 1) }
        return (.character(character), length)
    }

    /// ESC: a CSI or SS3 sequence, else Escape followed by whatever comes next.
    private static func escapeSequence(at index: Int, in bytes: [UInt8]) -> (KeyPress?, Int)? {
        guard index + 1 < bytes.count else { return nil }
        switch bytes[index + 1] {
        case UInt8(ascii: "["): return controlSequence(at: index, in: bytes)
        case UInt8(ascii: "O"):
            guard index + 2 < bytes.count else { return nil }
            let key: KeyPress? =
                switch bytes[index + 2] {
                case UInt8(ascii: "A"): .up
                case UInt8(ascii: "B"): .down
                case UInt8(ascii: "C"): .right
                case UInt8(ascii: "D"): .left
                case UInt8(ascii: "H"): .home
                case UInt8(ascii: "F"): .end
                default: nil
                }
            return (key, 3)
        default: return (.escape, 1)
        }
    }

    /// `ESC [ parameters final`: the final byte names the key, the parameters its variant.
    private static func controlSequence(at index: Int, in bytes: [UInt8]) -> (KeyPress?, Int)? {
        var end = index + 2
        while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) {
            guard (0x20...0x3F).contains(bytes[end]) else { return (nil, end - index) }
            end += 1
        }
        guard end < bytes.count else { return nil }
        let parameters = String(decoding: bytes[index + 2..<end], as: UTF8.self)
        let length = end - index + 1
        switch bytes[end] {
        case UInt8(ascii: "A"): return (.up, length)
        case UInt8(ascii: "B"): return (.down, length)
        case UInt8(ascii: "C"): return (.right, length)
        case UInt8(ascii: "D"): return (.left, length)
        case UInt8(ascii: "H"): return (.home, length)
        case UInt8(ascii: "F"): return (.end, length)
        case UInt8(ascii: "Z"): return (.backTab, length)
        case UInt8(ascii: "~"):
            let key: KeyPress? =
                switch parameters.split(separator: ";").first {
                case "1", "7": .home
                case "4", "8": .end
                case "3": .delete
                case "5": .pageUp
                case "6": .pageDown
                default: nil
                }
            return (key, length)
        case UInt8(ascii: "M"), UInt8(ascii: "m"):
            return (bytes[end] == UInt8(ascii: "M") ? mouse(parameters) : nil, length)
        default: return (nil, length)
        }
    }

    /// An SGR mouse report `<button;column;row` (1-based); releases and motion are not used.
    private static func mouse(_ parameters: String) -> KeyPress? {
        guard parameters.hasPrefix("<") else { return nil }
        let numbers = parameters.dropFirst().split(separator: ";").compactMap { Int($0) }
        guard numbers.count == 3, numbers[1] >= 1, numbers[2] >= 1 else { return nil }
        let action: MouseEvent.Action? =
            switch numbers[0] {
            case 0: .press
            case 64: .wheelUp
            case 65: .wheelDown
            default: nil
            }
        return action.map { .mouse(MouseEvent(action: $0, row: numbers[2] - 1, column: numbers[1] - 1)) }
    }
}
