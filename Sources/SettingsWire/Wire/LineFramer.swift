package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Splits a byte stream into newline-terminated frames, refusing a frame longer than the maximum
/// before its bytes are buffered.
///
/// A pure value: feed it bytes in any chunking (one byte at a time or many frames at once) and
/// take complete frames out. A `\r` before the newline is dropped; empty lines are skipped.
package struct LineFramer: Sendable {
    /// The largest frame accepted, newline excluded; a connection may raise it once it knows
    /// its peer (replica connections carry larger batches).
    package var maximumFrameBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes at the front of `buffer` already handed out as frames.
    private var consumed = 0
    /// Where the frame still being received starts: just after the last newline in `buffer`.
    private var partialStart = 0

    /// Creates a framer; the default maximum is 1 MiB.
    package init(maximumFrameBytes: Int = 1 << 20) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    /// How many bytes are buffered and not yet handed out.
    package var bufferedByteCount: Int { buffer.count - consumed }

    /// Adds received bytes.
    ///
    /// - Throws: `SettingsError` with code `frameTooLarge` when a frame would exceed the maximum;
    ///   nothing of `bytes` is kept then, and the stream should be closed.
    package mutating func append(_ bytes: some Collection<UInt8>) throws(SettingsError) {
        let scanned = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(SettingsError) in try lastNewline(in: UnsafeRawBufferPointer(buffer)) }
        }
        guard let scanned else { return try append(Array(bytes)) }
        if let lastNewline = try scanned.get() { partialStart = buffer.count + lastNewline + 1 }
        buffer.append(contentsOf: bytes)
    }

    /// The offset of the last newline in `bytes`, checking that no frame they end or continue
    /// runs past the maximum (newlines are found with `memchr`, many bytes at a time).
    private func lastNewline(in bytes: UnsafeRawBufferPointer) throws(SettingsError) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var partial = buffer.count - partialStart
        var position = 0
        var last: Int?
        while position < bytes.count {
            guard let found = memchr(base + position, 0x0A, bytes.count - position) else {
                partial += bytes.count - position
                break
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            partial += newline - position
            guard partial <= maximumFrameBytes else { break }
            partial = 0
            last = newline
            position = newline + 1
        }
        guard partial <= maximumFrameBytes else {
            throw SettingsError(.frameTooLarge, "frame exceeds the maximum of \(maximumFrameBytes) bytes")
        }
        return last
    }

    /// The next complete frame, without its newline, or nil until more bytes arrive.
    package mutating func nextFrame() -> ArraySlice<UInt8>? {
        while consumed < partialStart {
            // The byte before `partialStart` is a newline, so one is always found.
            let newline = buffer.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress,
                    let found = memchr(base + consumed, 0x0A, partialStart - consumed)
                else { return partialStart - 1 }
                return base.distance(to: UnsafeRawPointer(found))
            }
            var frame = buffer[consumed..<newline]
            consumed = newline + 1
            if frame.last == UInt8(ascii: "\r") { frame = frame.dropLast() }
            if !frame.isEmpty { return frame }
        }
        compact()
        return nil
    }

    /// Drops handed-out bytes once they are most of the buffer, so memory stays bounded.
    private mutating func compact() {
        guard consumed > 0, consumed >= buffer.count / 2 else { return }
        buffer.removeFirst(consumed)
        partialStart -= consumed
        consumed = 0
    }
}
