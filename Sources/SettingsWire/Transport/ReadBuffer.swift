package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// A reusable receive buffer: allocated once, never zeroed again, so reading a small request does
/// not cost clearing 64 KiB.
package final class ReadBuffer {
    let bytes: UnsafeMutableRawBufferPointer

    package init(capacity: Int = 64 * 1024) {
        bytes = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        bytes.deallocate()
    }

    /// Receives into the buffer; returns what `recv(2)` returns.
    package func receive(from fd: Int32, flags: Int32 = 0) -> Int {
        recv(fd, bytes.baseAddress, bytes.count, flags)
    }

    /// The first `count` bytes received.
    package func prefix(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[0..<count])
    }

    /// How one read into a framer ended.
    package enum Outcome {
        /// Bytes arrived and were framed; `drained` when they did not fill the buffer, so the
        /// socket held no more at that moment (a level-triggered poll reports what comes next).
        case received(drained: Bool)
        /// The peer closed its end.
        case endOfStream
        /// Nothing to read now.
        case wouldBlock
        /// A frame grew past the framer's maximum; the connection should be dropped with a last word.
        case frameTooLarge(SettingsError)
        /// Reading failed; the connection is gone.
        case failed(SettingsError)
    }

    /// Receives once from `fd` and hands what arrived to `framer`.
    package func read(from fd: Int32, into framer: inout LineFramer, flags: Int32 = 0) -> Outcome {
        let count = receive(from: fd, flags: flags)
        if count > 0 {
            do throws(SettingsError) {
                try framer.append(prefix(count))
                return .received(drained: count < bytes.count)
            } catch {
                return .frameTooLarge(error)
            }
        }
        if count == 0 { return .endOfStream }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(SettingsError(.connectionLost, "read failed: \(String(cString: strerror(errno)))"))
    }
}
