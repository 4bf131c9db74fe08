#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H

// libsodium: XChaCha20-Poly1305 (IETF), BLAKE2b (crypto_generichash), crypto_kdf and Argon2id
// (crypto_pwhash). Linked directly (a static settingsd takes libsodium.a), so the command line's
// `keys` commands work without the dynamic loader.
#include <sodium.h>

#endif
