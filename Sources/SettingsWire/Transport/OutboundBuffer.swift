package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Frames waiting to be written to a non-blocking socket, bounded so that a peer that stops
/// reading cannot make this process grow without limit.
package struct OutboundBuffer {
    /// The most bytes that may wait.
    let limit: Int
    private var bytes: [UInt8] = []
    private var offset = 0

    package init(limit: Int) {
        self.limit = limit
    }

    /// Whether everything queued has been written.
    package var isEmpty: Bool { offset == bytes.count }

    /// How many queued bytes wait to be written.
    package var pendingByteCount: Int { bytes.count - offset }

    /// Queues one frame whose text `write` appends in place (a newline follows it), so an
    /// answer is written straight into the buffer without building a `JSONValue` first.
    ///
    /// - Throws: `overloaded` when the buffer is already past its limit; the frame is not
    ///   queued, and the connection should be dropped.
    ///
    /// The limit bounds what the peer has not read *before* the frame, not the frame itself: an
    /// answer or event of any size goes to a peer that keeps reading (an export of a large store,
    /// a watcher of a large import), while a peer that stops reading is dropped once its backlog
    /// passes the limit, holding at most the limit and one frame.
    package mutating func appendFrame(_ write: (inout [UInt8]) -> Void) throws(SettingsError) {
        guard bytes.count - offset <= limit else {
            throw SettingsError(.overloaded, "outbound buffer over \(limit) bytes: the peer is not reading")
        }
        write(&bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// How a flush ended.
    package enum FlushResult {
        /// Everything was written.
        case drained
        /// The socket is full; wait until it is writable.
        case wouldBlock
        /// Writing failed; the connection is gone.
        case failed(SettingsError)
    }

    /// Writes as much as the socket takes without blocking.
    package mutating func flush(to fd: Int32) -> FlushResult {
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let pending = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return send(fd, pending.baseAddress, pending.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return .wouldBlock
            } else {
                return .failed(
                    SettingsError(.connectionLost, "write failed: \(String(cString: strerror(errno)))"))
            }
        }
        bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 20)
        offset = 0
        return .drained
    }

    /// Replaces what waits after the frame being written with `error`'s frame, whatever the
    /// limit: the peer reads whole frames up to an explanation, then the connection closes.
    package mutating func endWith(_ error: SettingsError) {
        var boundary = offset
        if offset > 0, offset < bytes.count, bytes[offset - 1] != UInt8(ascii: "\n") {
            boundary = (bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count - 1) + 1
        }
        bytes.removeSubrange(boundary...)
        WireMessage.failure(id: nil, error).write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Forgets everything queued.
    package mutating func discard() {
        bytes = []
        offset = 0
    }

    /// Sends an error frame once, without waiting (the peer may not be reading): the last word
    /// before a connection is closed for `error`.
    package static func sendLastWord(_ error: SettingsError, to fd: Int32) {
        var frame: [UInt8] = []
        WireMessage.failure(id: nil, error).write(to: &frame)
        frame.append(UInt8(ascii: "\n"))
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }
}
