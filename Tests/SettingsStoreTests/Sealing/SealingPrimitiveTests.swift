import Foundation
import Testing

@testable import SettingsStore
@testable import SettingsSync

@Suite("Sealing: libsodium's primitives against their specifications' test vectors")
struct SealingPrimitiveTests {
    static func bytes(_ hex: String) -> [UInt8] {
        Hex.bytes(hex.filter { !$0.isWhitespace }) ?? []
    }

    static func open(_ sealed: [UInt8], _ data: [UInt8], _ nonce: [UInt8], _ key: [UInt8]) -> [UInt8]? {
        sealed.withUnsafeBytes { sealed in
            nonce.withUnsafeBytes { nonce in Sodium.open(sealed, data: data, nonce: nonce, key: key) }
        }
    }

    @Test("XChaCha20-Poly1305 seals and opens draft-irtf-cfrg-xchacha-03's vector (appendix A.3.1)")
    func xchachaVector() throws {
        let plaintext = Array(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        let data = Self.bytes("50515253c0c1c2c3c4c5c6c7")
        let key = Self.bytes("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
        let nonce = Self.bytes("404142434445464748494a4b4c4d4e4f5051525354555657")
        let expected = Self.bytes(
            """
            bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
            731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
            2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
            21f9664c97637da9768812f615c68b13b52e
            c0875924c1c7987947deafd8780acf49
            """)
        let sealed = Sodium.seal(plaintext, data: data, nonce: nonce, key: key)
        #expect(sealed == expected)
        #expect(Self.open(sealed, data, nonce, key) == plaintext)
        var flipped = sealed
        flipped[10] ^= 1
        #expect(Self.open(flipped, data, nonce, key) == nil)
        #expect(Self.open(sealed, data + [0], nonce, key) == nil)
    }

    @Test("BLAKE2b matches RFC 7693's vector and the reference keyed vector")
    func blake2bVectors() {
        #expect(
            Sodium.hash(Array("abc".utf8), length: 64)
                == Self.bytes(
                    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
                ))
        #expect(
            Sodium.hash([], key: Array(0..<64), length: 64)
                == Self.bytes(
                    "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"
                ))
    }

    @Test("Argon2id (version 1.3) matches the reference implementation's output")
    func argon2idVector() {
        // argon2 ABCDEFGHIJKLMNOP -id -v 13 -k 1024 -t 5 -p 1 -l 32, password "123".
        let derived = Sodium.derive(
            passphrase: Array("123".utf8), salt: Array("ABCDEFGHIJKLMNOP".utf8),
            cost: Sodium.Cost(operations: 5, memoryBytes: 1 << 20), length: 32)
        #expect(derived == Self.bytes("3c5d010180ba0cf5b6b858cba23b318e42d33088983c404598599c3b029ecac6"))
    }

    @Test(
        "a key from a passphrase is the same from the same passphrase and salt, another from either changed")
    func passphraseDerivation() throws {
        let salt = Array(repeating: UInt8(7), count: 16)
        let cost = (operations: Sodium.Cost.least.operations, memory: Sodium.Cost.least.memoryBytes)
        let a = try SyncKey.derived(
            fromPassphrase: "correct horse battery staple", salt: salt, operations: cost.operations,
            memoryBytes: cost.memory)
        let b = try SyncKey.derived(
            fromPassphrase: "correct horse battery staple", salt: salt, operations: cost.operations,
            memoryBytes: cost.memory)
        let c = try SyncKey.derived(
            fromPassphrase: "correct horse battery stable", salt: salt, operations: cost.operations,
            memoryBytes: cost.memory)
        #expect(a == b && a.id == b.id)
        #expect(a != c)
        #expect(throws: SettingsError.self) { try SyncKey.derived(fromPassphrase: "too short") }
        #expect(throws: SettingsError.self) {
            try SyncKey.derived(fromPassphrase: "correct horse battery staple", salt: salt, operations: 1)
        }
    }

    @Test("a recovery text gives back its key; a mistyped character, a cut text or another text is refused")
    func recoveryText() throws {
        let key = SyncKey.random()
        let text = key.recoveryText
        #expect(text.hasPrefix("SDK1-"))
        #expect(try SyncKey(recoveryText: text) == key)
        #expect(
            try SyncKey(recoveryText: text.lowercased().replacingOccurrences(of: "-", with: " ") + "\n")
                == key)
        var characters = Array(text)
        let index = characters.count - 5
        characters[index] = characters[index] == "A" ? "B" : "A"
        #expect(throws: SettingsError.self) { try SyncKey(recoveryText: String(characters)) }
        #expect(throws: SettingsError.self) { try SyncKey(recoveryText: String(text.dropLast(3))) }
        #expect(throws: SettingsError.self) { try SyncKey(recoveryText: "hello") }
    }
}
