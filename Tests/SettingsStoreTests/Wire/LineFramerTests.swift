import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("LineFramer", .timeLimit(.minutes(2)))
struct LineFramerTests {
    func frames(_ framer: inout LineFramer) -> [String] {
        var result: [String] = []
        while let frame = framer.nextFrame() { result.append(String(decoding: frame, as: UTF8.self)) }
        return result
    }

    @Test("frames fed one byte at a time come out whole")
    func oneByteAtATime() throws {
        var framer = LineFramer()
        var result: [String] = []
        for byte in Array("{\"a\":1}\n{\"b\":2}\r\n\n{\"c\"".utf8) {
            try framer.append([byte])
            result += frames(&framer)
        }
        #expect(result == ["{\"a\":1}", "{\"b\":2}"])
        try framer.append(Array(":3}\n".utf8))
        #expect(frames(&framer) == ["{\"c\":3}"])
    }

    @Test("many frames in one chunk come out in order")
    func manyAtOnce() throws {
        var framer = LineFramer()
        let text = (0..<1000).map { "{\"n\":\($0)}\n" }.joined()
        try framer.append(Array(text.utf8))
        let result = frames(&framer)
        #expect(result.count == 1000)
        #expect(result.last == "{\"n\":999}")
        #expect(framer.bufferedByteCount == 0)
    }

    @Test("a frame at the maximum passes; one byte more is refused before it is buffered")
    func maximum() throws {
        var framer = LineFramer(maximumFrameBytes: 10)
        try framer.append(Array("0123456789\n".utf8))
        #expect(frames(&framer) == ["0123456789"])
        try framer.append(Array("01234".utf8))
        let error = #expect(throws: SettingsError.self) { try framer.append(Array("567890".utf8)) }
        #expect(error?.code == .frameTooLarge)
        #expect(framer.bufferedByteCount == 5)
    }

    @Test("an endless line without newline is refused in the first chunk that overflows")
    func endlessLine() throws {
        var framer = LineFramer(maximumFrameBytes: 1 << 20)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        var refused = false
        for _ in 0..<20 {
            do {
                try framer.append(chunk)
            } catch {
                refused = true
                break
            }
        }
        #expect(refused)
        #expect(framer.bufferedByteCount <= 1 << 20)
    }
}

extension LineFramerTests {
    @Test("an oversized frame between short ones in one chunk is refused, and nothing of it is kept")
    func oversizedInTheMiddle() throws {
        var framer = LineFramer(maximumFrameBytes: 10)
        try framer.append(Array("abc".utf8))
        let chunk = Array("de\n01234567890\nxy\n".utf8)
        let error = #expect(throws: SettingsError.self) { try framer.append(chunk) }
        #expect(error?.code == .frameTooLarge)
        #expect(framer.bufferedByteCount == 3)
    }

    @Test("any chunking of any frames gives the frames a plain split gives")
    func anyChunking() throws {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        for _ in 0..<200 {
            let lines = (0..<Int.random(in: 0...30, using: &generator)).map { _ in
                String(repeating: "x", count: Int.random(in: 0...12, using: &generator))
                    + (Bool.random(using: &generator) ? "\r" : "")
            }
            let text = Array(lines.map { $0 + "\n" }.joined().utf8)
            var framer = LineFramer(maximumFrameBytes: 13)
            var result: [String] = []
            var offset = 0
            while offset < text.count {
                let end = min(text.count, offset + Int.random(in: 1...40, using: &generator))
                try framer.append(text[offset..<end])
                result += frames(&framer)
                offset = end
            }
            let expected = lines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }.filter {
                !$0.isEmpty
            }
            #expect(result == expected)
            #expect(framer.bufferedByteCount == 0)
        }
    }
}
