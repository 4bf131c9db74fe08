import Testing

@testable import SettingsBrowser

@Suite("Browser: the terminal's bytes as key presses")
struct KeyDecoderTests {
    /// Bytes of every kind a terminal sends, with the keys they mean.
    static let sample: [([UInt8], [KeyPress])] = [
        (Array("aé€😀".utf8), [.character("a"), .character("é"), .character("€"), .character("😀")]),
        (
            [0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x42, 0x1B, 0x5B, 0x43, 0x1B, 0x5B, 0x44],
            [.up, .down, .right, .left]
        ),
        ([0x1B, 0x4F, 0x41, 0x1B, 0x4F, 0x48, 0x1B, 0x4F, 0x46], [.up, .home, .end]),
        (
            Array("\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[1~\u{1B}[4~\u{1B}[Z".utf8),
            [.pageUp, .pageDown, .delete, .home, .end, .backTab]
        ),
        ([0x0D, 0x09, 0x7F, 0x03, 0x15], [.enter, .tab, .backspace, .control("c"), .control("u")]),
        (
            Array("\u{1B}[<0;5;3M\u{1B}[<0;5;3m\u{1B}[<64;1;1M\u{1B}[<65;2;9M".utf8),
            [
                .mouse(MouseEvent(action: .press, row: 2, column: 4)),
                .mouse(MouseEvent(action: .wheelUp, row: 0, column: 0)),
                .mouse(MouseEvent(action: .wheelDown, row: 8, column: 1)),
            ]
        ),
    ]

    @Test("each key's bytes decode to it, whole or cut at any byte")
    func decodesWholeOrCut() {
        let bytes = Self.sample.flatMap(\.0)
        let expected = Self.sample.flatMap(\.1)
        var whole = KeyDecoder()
        #expect(whole.decode(bytes) == expected)
        for cut in 1..<bytes.count {
            var decoder = KeyDecoder()
            let keys = decoder.decode(Array(bytes[..<cut])) + decoder.decode(Array(bytes[cut...]))
            // An escape that ends the first read is the Escape key: the only cut that reads otherwise.
            if bytes[cut - 1] == 0x1B {
                #expect(keys.contains(.escape), "cut at \(cut)")
            } else {
                #expect(keys == expected, "cut at \(cut)")
            }
        }
    }

    @Test("a lone escape is Escape; unknown sequences and invalid bytes are dropped, never trapped on")
    func escapeAndJunk() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]) == [.escape])
        #expect(decoder.decode(Array("\u{1B}[99q".utf8)) == [])
        #expect(decoder.decode([0xFF, 0xC3, 0x28, 0x61]) == [.character("("), .character("a")])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let noise = (0..<Int.random(in: 1...24, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = decoder.decode(noise)
        }
        // Whatever came before, a plain key still reads as itself once the noise is flushed.
        _ = decoder.decode([0x1B])
        #expect(decoder.decode(Array("q".utf8)).last == .character("q"))
    }
}
