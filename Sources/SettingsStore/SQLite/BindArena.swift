/// Memory that bound text and blobs live in until the statement is reset, so SQLite can use them
/// in place (`SQLITE_STATIC`) instead of copying each one into a fresh allocation.
///
/// Earlier copies never move when later ones need more room: a full chunk is set aside and a new
/// one started; `reset()` frees the set-aside chunks and keeps one for the next round.
final class BindArena {
    private var chunk: UnsafeMutableRawBufferPointer
    private var used = 0
    private var retired: [UnsafeMutableRawBufferPointer] = []

    package init(capacity: Int = 16 * 1024) {
        chunk = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        reset()
        chunk.deallocate()
    }

    /// Copies `bytes` into the arena and returns where they now live.
    func copy(_ bytes: some Collection<UInt8>) -> UnsafeRawBufferPointer {
        let count = bytes.count
        if chunk.count - used < count {
            retired.append(chunk)
            chunk = .allocate(byteCount: max(count, chunk.count), alignment: 8)
            used = 0
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: chunk[used..<used + count])
        target.copyBytes(from: bytes)
        used += count
        return UnsafeRawBufferPointer(target)
    }

    /// Forgets every copy; call only once SQLite no longer reads them (after the statement's reset).
    func reset() {
        for old in retired { old.deallocate() }
        retired.removeAll(keepingCapacity: true)
        used = 0
    }
}
