package import SettingsStore

/// The key as a recovery text a person can copy or type: `settingsd keys export` prints it,
/// `settingsd keys import` reads it on another machine.
///
/// A version byte (1), both secrets and a 4-byte BLAKE2b checksum, in Crockford's base 32
/// (digits and capitals without I, L, O and U; reading takes them as 1, 1, 0 and V's neighbour is
/// refused), in groups of six after the prefix `SDK1`. Reading ignores case, spaces, dashes and
/// line breaks, and a typing mistake fails the checksum instead of making another key.
extension SyncKey {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    private static let prefix = "SDK1"

    /// The recovery text, in groups of six separated by dashes.
    package var recoveryText: String {
        var payload: [UInt8] = [1] + naming + sealing
        payload += Sodium.hash(payload, length: 16).prefix(4)
        let characters = Self.base32(payload)
        var groups: [String] = [Self.prefix]
        var index = 0
        while index < characters.count {
            groups.append(
                String(decoding: characters[index..<min(index + 6, characters.count)], as: UTF8.self))
            index += 6
        }
        return groups.joined(separator: "-")
    }

    /// The key in a recovery text, or why it is not one.
    package init(recoveryText text: String) throws(SettingsError) {
        var characters: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                UInt8(ascii: "\t"):
                continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                characters.append(byte - 32)
            default:
                characters.append(byte)
            }
        }
        guard characters.starts(with: Array(Self.prefix.utf8)) else {
            throw SettingsError(
                .invalidValue, "a recovery text starts with \(Self.prefix): this is not one (copy all of it)")
        }
        characters.removeFirst(Self.prefix.utf8.count)
        guard let payload = Self.decodeBase32(characters), payload.count == 69 else {
            throw SettingsError(
                .invalidValue,
                "the recovery text has a character that is not in it, or is cut short (it holds 111 letters and digits after \(Self.prefix))"
            )
        }
        guard payload[0] == 1 else {
            throw SettingsError(
                .unsupportedVersion, "the recovery text is of version \(payload[0]): upgrade settingsd")
        }
        guard Sodium.hash(payload[0..<65], length: 16).prefix(4).elementsEqual(payload[65..<69]) else {
            throw SettingsError(
                .invalidValue, "the recovery text's checksum does not match: a character was mistyped")
        }
        self.init(naming: Array(payload[1..<33]), sealing: Array(payload[33..<65]))
    }

    private static func base32(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return out
    }

    private static func decodeBase32(_ characters: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in characters {
            let folded: UInt8 =
                switch character {
                case UInt8(ascii: "O"): UInt8(ascii: "0")
                case UInt8(ascii: "I"), UInt8(ascii: "L"): UInt8(ascii: "1")
                default: character
                }
            guard let value = alphabet.firstIndex(of: folded) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
