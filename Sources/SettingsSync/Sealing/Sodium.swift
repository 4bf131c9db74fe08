import CSodium

/// The libsodium primitives settingsd seals with, and nothing of its own: XChaCha20-Poly1305
/// (IETF) for entries, keyed BLAKE2b (`crypto_generichash`) for key ids, nonces and record tags,
/// `crypto_kdf` for subkeys, Argon2id (`crypto_pwhash`) for keys from a passphrase, and the
/// system's random source. The only code that imports `CSodium`.
enum Sodium {
    /// XChaCha20-Poly1305's key, nonce and tag sizes.
    static let keyBytes = 32
    static let nonceBytes = 24
    static let tagBytes = 16
    /// Argon2id's salt size.
    static let saltBytes = 16

    /// `sodium_init`, once per process (it is safe to call from any thread).
    private static let initialized: Bool = sodium_init() >= 0

    /// Makes sure libsodium is ready; false only when the system gives it no random source.
    static var isReady: Bool { initialized }

    /// `count` bytes from the system's random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(initialized, "libsodium could not initialise (no random source)")
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 { randombytes_buf(&bytes, count) }
        return bytes
    }

    /// BLAKE2b of `message` in `length` bytes (16…64), keyed with `key` (16…64 bytes) when given.
    static func hash(_ message: some Collection<UInt8>, key: [UInt8]? = nil, length: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let bytes = Array(message)
        if let key {
            _ = crypto_generichash(&out, length, bytes, UInt64(bytes.count), key, key.count)
        } else {
            _ = crypto_generichash(&out, length, bytes, UInt64(bytes.count), nil, 0)
        }
        return out
    }

    /// Subkey `id` of `key` for `context` (exactly 8 characters), `crypto_kdf_derive_from_key`.
    static func subkey(_ id: UInt64, of key: [UInt8], context: StaticString, length: Int = keyBytes)
        -> [UInt8]
    {
        precondition(context.utf8CodeUnitCount == 8, "a crypto_kdf context is 8 bytes")
        var out = [UInt8](repeating: 0, count: length)
        _ = crypto_kdf_derive_from_key(&out, length, id, "\(context)", key)
        return out
    }

    /// XChaCha20-Poly1305 (IETF): `plaintext` sealed under `key` and `nonce`, with `data`
    /// authenticated beside it; the ciphertext followed by the 16-byte tag.
    static func seal(_ plaintext: [UInt8], data: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(nonce.count == nonceBytes && key.count == keyBytes)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var written: UInt64 = 0
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
            &out, &written, plaintext, UInt64(plaintext.count), data, UInt64(data.count), nil, nonce, key)
        return out
    }

    /// Opens what `seal` made (`sealed`: the ciphertext and its tag) under the 24-byte `nonce`;
    /// nil when the tag does not verify (any byte of the ciphertext, the data, the nonce or the
    /// key differs).
    static func open(
        _ sealed: UnsafeRawBufferPointer, data: [UInt8], nonce: UnsafeRawBufferPointer, key: [UInt8]
    ) -> [UInt8]? {
        guard sealed.count >= tagBytes, nonce.count == nonceBytes, key.count == keyBytes,
            let ciphertext = sealed.baseAddress, let nonce = nonce.baseAddress
        else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count - tagBytes)
        var written: UInt64 = 0
        let result = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &written, nil, ciphertext.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count), data,
            UInt64(data.count), nonce.assumingMemoryBound(to: UInt8.self), key)
        guard result == 0 else { return nil }
        return out
    }

    /// The cost of deriving a key from a passphrase (Argon2id): `crypto_pwhash`'s "moderate"
    /// limits, 3 passes over 256 MiB, about a second on a laptop.
    struct Cost: Equatable, Sendable {
        var operations: UInt64
        var memoryBytes: Int

        static let moderate = Cost(
            operations: UInt64(crypto_pwhash_opslimit_moderate()),
            memoryBytes: crypto_pwhash_memlimit_moderate())
        /// The least cost accepted from a record: `crypto_pwhash`'s interactive limits.
        static let least = Cost(
            operations: UInt64(crypto_pwhash_opslimit_interactive()),
            memoryBytes: crypto_pwhash_memlimit_interactive())
        /// The most accepted from a record (a hostile one could ask for all of memory).
        static let most = Cost(operations: 16, memoryBytes: 4 << 30)
    }

    /// `length` bytes derived from `passphrase` and `salt` by Argon2id version 1.3; nil when
    /// the memory cannot be had.
    static func derive(passphrase: [UInt8], salt: [UInt8], cost: Cost, length: Int) -> [UInt8]? {
        precondition(salt.count == saltBytes)
        var out = [UInt8](repeating: 0, count: length)
        let characters = passphrase.map { CChar(bitPattern: $0) }
        let result = crypto_pwhash(
            &out, UInt64(length), characters, UInt64(characters.count), salt, cost.operations,
            cost.memoryBytes,
            crypto_pwhash_ALG_ARGON2ID13)
        return result == 0 ? out : nil
    }

    /// Whether two byte strings are equal, in time that does not depend on where they differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return sodium_memcmp(a, b, a.count) == 0
    }
}
