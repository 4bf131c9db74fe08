import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Packed hub batches: the layout a shared batch travels in")
struct PackedBatchTests {
    /// A row as the test writes it, in `PackedBatch`'s layout.
    struct Written: Equatable {
        var sequence: Int64
        var stamp: Int64
        var writer: [UInt8]
        var pusher: [UInt8]
        var key: [UInt8]?
        var value: [UInt8]?

        /// The bytes `settingsd.pack_batch` makes of this row.
        var packed: [UInt8] {
            let flags: UInt8 =
                (key == nil ? 1 : 0) | (key != nil && value == nil ? 2 : 0) | (pusher == writer ? 4 : 0)
            var bytes =
                Self.word(UInt64(bitPattern: sequence), 8) + Self.word(UInt64(bitPattern: stamp), 8) + [flags]
            bytes += Self.field(writer)
            if pusher != writer { bytes += Self.field(pusher) }
            if let key {
                bytes += Self.field(key)
                if let value { bytes += Self.field(value) }
            }
            return bytes
        }

        static func field(_ bytes: [UInt8]) -> [UInt8] { word(UInt64(bytes.count), 4) + bytes }

        static func word(_ value: UInt64, _ count: Int) -> [UInt8] {
            (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }

    /// The rows `forEach` reads from `bytes`, and its refusal if any.
    static func read(_ bytes: [UInt8]) -> (rows: [Written], refusal: PackedBatch.Malformed?) {
        var rows: [Written] = []
        let refusal = bytes.withUnsafeBytes { buffer -> PackedBatch.Malformed? in
            do throws(PackedBatch.Malformed) {
                try PackedBatch.forEach(in: buffer) { row in
                    #expect(row.isOversize == (row.key == nil))
                    rows.append(
                        Written(
                            sequence: row.sequence, stamp: row.stamp, writer: Array(row.writer),
                            pusher: Array(row.pusher), key: row.key.map(Array.init),
                            value: row.value.map(Array.init)))
                }
                return nil
            } catch {
                return error
            }
        }
        return (rows, refusal)
    }

    static func randomRows(count: Int, using generator: inout SeededGenerator) -> [Written] {
        (0..<count).map { _ in
            let writer = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let pusher =
                Bool.random(using: &generator)
                ? writer : (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let kind = Int.random(in: 0..<4, using: &generator)
            let key = kind == 0 ? nil : Array("packed.\(Int.random(in: 0...999, using: &generator))".utf8)
            let value =
                kind < 2
                ? nil
                : (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            return Written(
                sequence: Int64.random(in: Int64.min...Int64.max, using: &generator),
                stamp: Int64.random(in: Int64.min...Int64.max, using: &generator), writer: writer,
                pusher: pusher,
                key: key, value: value)
        }
    }

    @Test("rows written in the layout read back as written, oversize rows and tombstones included")
    func rowsReadBackAsWritten() {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        for _ in 0..<50 {
            let rows = Self.randomRows(count: Int.random(in: 0...40, using: &generator), using: &generator)
            let read = Self.read(rows.flatMap(\.packed))
            #expect(read.refusal == nil)
            #expect(read.rows == rows)
        }
    }

    @Test("a batch cut short anywhere but at a row's end is refused, after the rows before the cut")
    func everyCutIsRefused() {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        let rows = Self.randomRows(count: 12, using: &generator)
        let bytes = rows.flatMap(\.packed)
        let ends = Set(rows.indices.map { rows[...$0].reduce(0) { $0 + $1.packed.count } })
        for length in 0..<bytes.count {
            let read = Self.read(Array(bytes[..<length]))
            let whole = ends.filter { $0 <= length }.count
            #expect(read.rows == Array(rows.prefix(whole)), "cut at \(length)")
            #expect((read.refusal == nil) == (length == 0 || ends.contains(length)), "cut at \(length)")
        }
    }

    @Test("a length longer than what is left, or unknown flags, is refused before anything is read for it")
    func hostileLengthsAndFlagsAreRefused() {
        let writer = [UInt8](repeating: 7, count: 16)
        let head = Written.word(5, 8) + Written.word(9, 8)
        let huge = Self.read(head + [4] + Written.word(UInt64(UInt32.max), 4) + writer)
        #expect(huge.rows.isEmpty)
        #expect(huge.refusal?.offset == 17)
        #expect(huge.refusal?.reason.contains("claims 4294967295 bytes") == true)
        let flags = Self.read(head + [8] + Written.field(writer))
        #expect(flags.refusal == PackedBatch.Malformed(offset: 16, reason: "unknown flags 8"))
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        for _ in 0..<2_000 {
            let noise = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            // Never a crash, never more rows than the bytes could hold (21 bytes at the least).
            let read = Self.read(noise)
            #expect(read.rows.count * 21 <= noise.count)
        }
    }
}
