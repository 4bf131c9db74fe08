import SettingsStore
import SettingsWire

/// MD5 (RFC 1321), for `HubFingerprint` only.
enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// floor(abs(sin(i + 1)) × 2^32), as RFC 1321 tabulates them.
    private static let constants: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613,
        0xfd46_9501, 0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193,
        0xa679_438e, 0x49b4_0821, 0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d,
        0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8, 0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed,
        0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a, 0xfffa_3942, 0x8771_f681, 0x6d9d_6122,
        0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70, 0x289b_7ec6, 0xeaa1_27fa,
        0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665, 0xf429_2244,
        0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb,
        0xeb86_d391,
    ]

    /// The first 8 bytes of the MD5 digest of `message`, read big-endian: the hub's fingerprint.
    /// Whole blocks are read in place and the tail is padded on the stack, so a call allocates
    /// nothing (a comparison hashes every entry of the store once).
    static func prefix64(_ message: UnsafeRawBufferPointer) -> UInt64 {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        let whole = message.count / 64 * 64
        shifts.withUnsafeBufferPointer { shifts in
            constants.withUnsafeBufferPointer { constants in
                var offset = 0
                while offset < whole, let base = message.baseAddress {
                    compress(&state, base + offset, shifts, constants)
                    offset += 64
                }
                withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
                    guard let padded = tail.baseAddress else { return }
                    tail.initializeMemory(as: UInt8.self, repeating: 0)
                    let rest = message.count - whole
                    if rest > 0, let base = message.baseAddress {
                        padded.copyMemory(from: base + whole, byteCount: rest)
                    }
                    tail[rest] = 0x80
                    let blocks = rest < 56 ? 1 : 2
                    tail.storeBytes(
                        of: (UInt64(message.count) &* 8).littleEndian, toByteOffset: blocks * 64 - 8,
                        as: UInt64.self)
                    for block in 0..<blocks { compress(&state, padded + block * 64, shifts, constants) }
                }
            }
        }
        return UInt64(state.0.byteSwapped) << 32 | UInt64(state.1.byteSwapped)
    }

    /// Mixes one 64-byte block at `block` into `state`.
    @inline(__always)
    private static func compress(
        _ state: inout (UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawPointer,
        _ shifts: UnsafeBufferPointer<UInt32>, _ constants: UnsafeBufferPointer<UInt32>
    ) {
        @inline(__always) func word(_ index: Int) -> UInt32 {
            block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self).littleEndian
        }
        var (a, b, c, d) = state
        @inline(__always) func step(_ f: UInt32, _ round: Int, _ g: Int) {
            let sum = f &+ a &+ constants[round] &+ word(g)
            a = d
            d = c
            c = b
            b = b &+ (sum << shifts[round] | sum >> (32 - shifts[round]))
        }
        for round in 0..<16 { step((b & c) | (~b & d), round, round) }
        for round in 16..<32 { step((d & b) | (~d & c), round, (5 * round + 1) & 15) }
        for round in 32..<48 { step(b ^ c ^ d, round, (3 * round + 5) & 15) }
        for round in 48..<64 { step(c ^ (b | ~d), round, (7 * round) & 15) }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
