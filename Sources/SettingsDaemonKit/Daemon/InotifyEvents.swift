#if canImport(Glibc)
    import Glibc
#endif

/// The events in a buffer `read` from an inotify descriptor: each its watch and the name in it.
struct InotifyEvents: Sequence {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    func makeIterator() -> AnyIterator<(watch: Int32, name: String)> {
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        return AnyIterator {
            guard offset + header <= bytes.endIndex else { return nil }
            let event = bytes[offset..<(offset + header)].withUnsafeBytes {
                $0.loadUnaligned(as: inotify_event.self)
            }
            let nameBytes = bytes[
                (offset + header)..<Swift.min(bytes.endIndex, offset + header + Int(event.len))]
            offset += header + Int(event.len)
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            return (event.wd, name)
        }
    }
}
