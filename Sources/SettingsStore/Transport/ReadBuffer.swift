#if canImport(Glibc)
    import Glibc
#endif

/// A reusable receive buffer: allocated once, never zeroed again, so reading a small request does
/// not cost clearing 64 KiB.
final class ReadBuffer {
    let bytes: UnsafeMutableRawBufferPointer

    init(capacity: Int = 64 * 1024) {
        bytes = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        bytes.deallocate()
    }

    /// Receives into the buffer; returns what `recv(2)` returns.
    func receive(from fd: Int32, flags: Int32 = 0) -> Int {
        recv(fd, bytes.baseAddress, bytes.count, flags)
    }

    /// The first `count` bytes received.
    func prefix(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[0..<count])
    }
}
